-- An "Experiment" is a run of any protocol (a PXP experiment, an EVINCE debate, a clembench game
-- run), so the table, its key column on sessions and their constraints say so. Renames keep the data.
ALTER TABLE "Experiment" RENAME TO "Run";
ALTER TABLE "Run" RENAME CONSTRAINT "Experiment_pkey" TO "Run_pkey";
ALTER TABLE "Run" RENAME CONSTRAINT "Experiment_studyId_fkey" TO "Run_studyId_fkey";
ALTER INDEX "Experiment_studyId_idx" RENAME TO "Run_studyId_idx";

ALTER TABLE "ProtocolSession" RENAME COLUMN "experimentId" TO "runId";
ALTER TABLE "ProtocolSession" RENAME CONSTRAINT "ProtocolSession_experimentId_fkey" TO "ProtocolSession_runId_fkey";
ALTER INDEX "ProtocolSession_experimentId_key_key" RENAME TO "ProtocolSession_runId_key_key";
ALTER INDEX "ProtocolSession_experimentId_status_idx" RENAME TO "ProtocolSession_runId_status_idx";

-- The audit trail names the resource as the code now does.
UPDATE "AuditLog" SET "resourceType" = 'run' WHERE "resourceType" = 'experiment';

-- Steps already queued name their run as `experimentId`; the workers now read `runId`.
DO $$
BEGIN
  IF to_regclass('pgboss.job') IS NOT NULL THEN
    UPDATE pgboss.job
    SET data = (data - 'experimentId') || jsonb_build_object('runId', data -> 'experimentId')
    WHERE data ? 'experimentId' AND state IN ('created', 'retry', 'active');
  END IF;
END $$;
