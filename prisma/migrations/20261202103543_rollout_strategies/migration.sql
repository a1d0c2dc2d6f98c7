-- AlterEnum
ALTER TYPE "RolloutState" ADD VALUE 'WAITING_APPROVAL';

-- AlterTable
ALTER TABLE "Rollout" ADD COLUMN     "maxNodeClaimLaunchFailures" INTEGER,
ADD COLUMN     "maxPendingPodSeconds" INTEGER,
ADD COLUMN     "strategyName" VARCHAR(63);

-- AlterTable
ALTER TABLE "RolloutWave" ADD COLUMN     "approval" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "approvedAt" TIMESTAMPTZ(3),
ADD COLUMN     "approvedBy" VARCHAR(256),
ADD COLUMN     "minHealthySeconds" INTEGER,
ADD COLUMN     "pauseSeconds" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "resumeAt" TIMESTAMPTZ(3),
ADD COLUMN     "selector" VARCHAR(4096);

-- CreateTable
CREATE TABLE "RolloutStrategy" (
    "id" UUID NOT NULL,
    "name" VARCHAR(63) NOT NULL,
    "stages" JSONB NOT NULL,
    "maxFailures" INTEGER NOT NULL,
    "waveTimeoutSeconds" INTEGER NOT NULL,
    "maxNodeClaimLaunchFailures" INTEGER,
    "maxPendingPodSeconds" INTEGER,
    "createdBy" VARCHAR(256) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "RolloutStrategy_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "RolloutStrategy_name_key" ON "RolloutStrategy"("name");

