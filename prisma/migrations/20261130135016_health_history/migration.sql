-- CreateTable
CREATE TABLE "HealthRollup" (
    "clusterId" UUID NOT NULL,
    "bucket" TIMESTAMPTZ(3) NOT NULL,
    "samples" INTEGER NOT NULL,
    "availableSamples" INTEGER NOT NULL,
    "degradedSamples" INTEGER NOT NULL,
    "progressingSamples" INTEGER NOT NULL,
    "nodesAvg" DOUBLE PRECISION,
    "nodesMax" INTEGER,
    "vcpusAvg" DOUBLE PRECISION,

    CONSTRAINT "HealthRollup_pkey" PRIMARY KEY ("clusterId","bucket")
);

-- CreateTable
CREATE TABLE "ConditionTransition" (
    "id" BIGSERIAL NOT NULL,
    "clusterId" UUID NOT NULL,
    "type" VARCHAR(64) NOT NULL,
    "fromStatus" VARCHAR(16),
    "fromReason" VARCHAR(128),
    "toStatus" VARCHAR(16) NOT NULL,
    "toReason" VARCHAR(128) NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ConditionTransition_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "HealthRollup_bucket_idx" ON "HealthRollup"("bucket");

-- CreateIndex
CREATE INDEX "ConditionTransition_clusterId_at_idx" ON "ConditionTransition"("clusterId", "at");

-- AddForeignKey
ALTER TABLE "HealthRollup" ADD CONSTRAINT "HealthRollup_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ConditionTransition" ADD CONSTRAINT "ConditionTransition_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Hand-written: HealthSample becomes range-partitioned by day on "observedAt". Prisma cannot
-- express partitioning, but its model stays usable because the columns and the primary key (which
-- must include the partition key) are unchanged. Retention drops whole partitions instead of
-- deleting millions of rows, and one day of one cluster touches one or two small indexes.
-- The daily partitions are created (ahead) and dropped by the worker's history maintenance
-- (apps/worker/src/maintenance/health-partitions.ts), also once at its start-up.
-- No semicolons in comments here: the migration runner splits the script on them.
ALTER TABLE "HealthSample" RENAME TO "HealthSample_legacy";
ALTER TABLE "HealthSample_legacy" RENAME CONSTRAINT "HealthSample_pkey" TO "HealthSample_legacy_pkey";
ALTER TABLE "HealthSample_legacy" RENAME CONSTRAINT "HealthSample_clusterId_fkey" TO "HealthSample_legacy_clusterId_fkey";

CREATE TABLE "HealthSample" (
    "clusterId" UUID NOT NULL,
    "observedAt" TIMESTAMPTZ(3) NOT NULL,
    "observedGeneration" INTEGER NOT NULL,
    "available" BOOLEAN NOT NULL,
    "degraded" BOOLEAN NOT NULL,
    "progressing" BOOLEAN NOT NULL,
    "metrics" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "HealthSample_pkey" PRIMARY KEY ("clusterId","observedAt")
) PARTITION BY RANGE ("observedAt");

ALTER TABLE "HealthSample" ADD CONSTRAINT "HealthSample_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Catches samples whose day has no partition yet (a sidecar clock far off, maintenance behind),
-- so an ingest never fails for want of a partition. The maintenance moves them out later.
CREATE TABLE "HealthSample_default" PARTITION OF "HealthSample" DEFAULT;

INSERT INTO "HealthSample" SELECT * FROM "HealthSample_legacy";
DROP TABLE "HealthSample_legacy";
