-- AlterTable
ALTER TABLE "DesiredState" ADD COLUMN     "interruptionQueue" TEXT,
ADD COLUMN     "karpenterVersion" TEXT,
ADD COLUMN     "operandImage" TEXT;

