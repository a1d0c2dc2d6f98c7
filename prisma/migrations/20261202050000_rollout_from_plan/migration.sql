-- AlterTable
ALTER TABLE "Rollout" ADD COLUMN "planId" UUID;

-- AlterTable
ALTER TABLE "RolloutCluster" ADD COLUMN "planGeneration" INTEGER;

-- AlterTable
ALTER TABLE "ChangePlan" ADD COLUMN "rolloutId" UUID;

-- CreateIndex
CREATE UNIQUE INDEX "ChangePlan_rolloutId_key" ON "ChangePlan"("rolloutId");
