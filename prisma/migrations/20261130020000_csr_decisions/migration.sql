-- AlterTable
ALTER TABLE "ClusterStatus" ADD COLUMN     "clusterAutoscaler" JSONB;

-- CreateTable
CREATE TABLE "CsrDecision" (
    "id" BIGSERIAL NOT NULL,
    "clusterId" UUID NOT NULL,
    "csrName" VARCHAR(253) NOT NULL,
    "nodeName" VARCHAR(253),
    "signerName" VARCHAR(253) NOT NULL,
    "decision" VARCHAR(16) NOT NULL,
    "reason" VARCHAR(64) NOT NULL,
    "message" VARCHAR(1024) NOT NULL,
    "decidedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "CsrDecision_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "CsrDecision_clusterId_decidedAt_idx" ON "CsrDecision"("clusterId", "decidedAt");

-- CreateIndex
CREATE UNIQUE INDEX "CsrDecision_clusterId_csrName_decidedAt_key" ON "CsrDecision"("clusterId", "csrName", "decidedAt");

-- AddForeignKey
ALTER TABLE "CsrDecision" ADD CONSTRAINT "CsrDecision_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

