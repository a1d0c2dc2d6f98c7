-- CreateEnum
CREATE TYPE "ChangePlanClusterState" AS ENUM ('PENDING', 'PLANNED', 'NOT_PLANNED', 'FAILED');

-- CreateTable
CREATE TABLE "ChangePlan" (
    "id" UUID NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "createdBy" VARCHAR(256) NOT NULL,
    "createdByTokenId" UUID,
    "clusterId" UUID,
    "labelSelector" VARCHAR(4096),
    "change" JSONB NOT NULL,
    "appliedAt" TIMESTAMPTZ(3),
    "appliedBy" VARCHAR(256),

    CONSTRAINT "ChangePlan_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ChangePlanCluster" (
    "planId" UUID NOT NULL,
    "clusterId" UUID NOT NULL,
    "clusterName" VARCHAR(63) NOT NULL,
    "generation" INTEGER NOT NULL,
    "state" "ChangePlanClusterState" NOT NULL DEFAULT 'PENDING',
    "reason" VARCHAR(128),
    "message" TEXT,
    "objects" JSONB,
    "completedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ChangePlanCluster_pkey" PRIMARY KEY ("planId","clusterId")
);

-- CreateIndex
CREATE INDEX "ChangePlan_createdAt_idx" ON "ChangePlan"("createdAt");

-- CreateIndex
CREATE INDEX "ChangePlanCluster_planId_state_idx" ON "ChangePlanCluster"("planId", "state");

-- CreateIndex
CREATE INDEX "ChangePlanCluster_planId_clusterName_idx" ON "ChangePlanCluster"("planId", "clusterName");

-- AddForeignKey
ALTER TABLE "ChangePlanCluster" ADD CONSTRAINT "ChangePlanCluster_planId_fkey" FOREIGN KEY ("planId") REFERENCES "ChangePlan"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ChangePlanCluster" ADD CONSTRAINT "ChangePlanCluster_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

