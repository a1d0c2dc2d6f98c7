-- CreateEnum
CREATE TYPE "RolloutState" AS ENUM ('RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'ABORTED');

-- CreateEnum
CREATE TYPE "RolloutWaveState" AS ENUM ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'SKIPPED');

-- CreateEnum
CREATE TYPE "RolloutClusterState" AS ENUM ('PENDING', 'APPLYING', 'HEALTHY', 'FAILED', 'SKIPPED');

-- CreateTable
CREATE TABLE "Rollout" (
    "id" UUID NOT NULL,
    "state" "RolloutState" NOT NULL DEFAULT 'RUNNING',
    "reason" VARCHAR(2048),
    "selector" VARCHAR(4096) NOT NULL,
    "scopeSelector" VARCHAR(4096),
    "change" JSONB NOT NULL,
    "waveSteps" JSONB NOT NULL,
    "minHealthySeconds" INTEGER NOT NULL,
    "maxFailures" INTEGER NOT NULL,
    "waveTimeoutSeconds" INTEGER NOT NULL,
    "currentWave" INTEGER NOT NULL DEFAULT 0,
    "createdBy" VARCHAR(100) NOT NULL,
    "createdByTokenId" UUID,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "Rollout_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RolloutWave" (
    "rolloutId" UUID NOT NULL,
    "index" INTEGER NOT NULL,
    "state" "RolloutWaveState" NOT NULL DEFAULT 'PENDING',
    "size" INTEGER NOT NULL,
    "startedAt" TIMESTAMPTZ(3),
    "deadlineAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "RolloutWave_pkey" PRIMARY KEY ("rolloutId","index")
);

-- CreateTable
CREATE TABLE "RolloutCluster" (
    "rolloutId" UUID NOT NULL,
    "clusterId" UUID NOT NULL,
    "clusterName" VARCHAR(63) NOT NULL,
    "wave" INTEGER NOT NULL,
    "state" "RolloutClusterState" NOT NULL DEFAULT 'PENDING',
    "generation" INTEGER,
    "reason" VARCHAR(1024),
    "appliedAt" TIMESTAMPTZ(3),
    "healthySince" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "RolloutCluster_pkey" PRIMARY KEY ("rolloutId","clusterId")
);

-- CreateIndex
CREATE INDEX "Rollout_state_createdAt_idx" ON "Rollout"("state", "createdAt");

-- CreateIndex
CREATE INDEX "Rollout_createdAt_id_idx" ON "Rollout"("createdAt", "id");

-- CreateIndex
CREATE INDEX "RolloutCluster_rolloutId_wave_idx" ON "RolloutCluster"("rolloutId", "wave");

-- CreateIndex
CREATE INDEX "RolloutCluster_clusterId_state_idx" ON "RolloutCluster"("clusterId", "state");

-- AddForeignKey
ALTER TABLE "RolloutWave" ADD CONSTRAINT "RolloutWave_rolloutId_fkey" FOREIGN KEY ("rolloutId") REFERENCES "Rollout"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RolloutCluster" ADD CONSTRAINT "RolloutCluster_rolloutId_fkey" FOREIGN KEY ("rolloutId") REFERENCES "Rollout"("id") ON DELETE CASCADE ON UPDATE CASCADE;
