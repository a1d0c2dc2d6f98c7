-- AlterTable
ALTER TABLE "ClusterStatus" ADD COLUMN     "migrationProposal" JSONB,
ADD COLUMN     "migrationProposalGeneration" INTEGER;

