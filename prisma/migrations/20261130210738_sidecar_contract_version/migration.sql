-- AlterTable
ALTER TABLE "ClusterStatus" ADD COLUMN     "sidecarContractVersion" INTEGER,
ADD COLUMN     "sidecarVersion" VARCHAR(64);

