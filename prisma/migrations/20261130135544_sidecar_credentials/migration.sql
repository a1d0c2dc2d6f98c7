-- AlterTable
-- Clusters registered before per-cluster Redis users get an unusable hash: they need
-- rotateClusterCredentials to obtain a Redis password.
ALTER TABLE "Cluster" ADD COLUMN     "previousCredentialsExpireAt" TIMESTAMPTZ(3),
ADD COLUMN     "previousRedisPasswordHash" CHAR(64),
ADD COLUMN     "previousReportTokenHash" CHAR(64),
ADD COLUMN     "redisPasswordHash" CHAR(64) NOT NULL DEFAULT repeat('0', 64);
ALTER TABLE "Cluster" ALTER COLUMN "redisPasswordHash" DROP DEFAULT;
