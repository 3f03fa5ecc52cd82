-- AlterTable
ALTER TABLE "Experiment" ADD COLUMN     "analysis" JSONB NOT NULL DEFAULT '{}';
