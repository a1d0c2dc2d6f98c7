-- CreateEnum
CREATE TYPE "DriftPolicy" AS ENUM ('CORRECT', 'REPORT');

-- AlterTable
ALTER TABLE "DesiredState" ADD COLUMN     "driftPolicy" "DriftPolicy" NOT NULL DEFAULT 'CORRECT';

-- AlterTable
ALTER TABLE "ClusterStatus" ADD COLUMN     "drift" JSONB,
ADD COLUMN     "drifted" BOOLEAN NOT NULL DEFAULT false;

-- CreateIndex
CREATE INDEX "ClusterStatus_drifted_idx" ON "ClusterStatus"("drifted");

