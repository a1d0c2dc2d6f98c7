-- AlterTable
ALTER TABLE "ClusterStatus" ADD COLUMN     "machineConfigPools" JSONB;

-- AlterTable
ALTER TABLE "HealthSample" ADD COLUMN     "machineConfigPools" JSONB;

