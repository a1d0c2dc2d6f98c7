-- AlterTable
ALTER TABLE "Cluster" ADD COLUMN     "clusterApiName" VARCHAR(253),
ADD COLUMN     "clusterApiNamespace" VARCHAR(63),
ADD COLUMN     "infrastructureProvider" VARCHAR(32);

-- AlterTable
ALTER TABLE "DesiredState" ADD COLUMN     "allowedInstanceTypes" TEXT[] DEFAULT ARRAY[]::TEXT[];

