-- AlterTable
ALTER TABLE "DesiredState" ADD COLUMN     "webIdentityRoleArn" TEXT;

