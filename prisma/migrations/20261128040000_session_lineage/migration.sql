-- Session lineage and run scheduling (lib/server/engine/schedule.ts).

-- A session's key, unique per run: the sessions a plan made are `<repetition>:<position>`, which is
-- what the (run, repetition, position) uniqueness it replaces guaranteed to be unique.
ALTER TABLE "ProtocolSession" ADD COLUMN "key" TEXT;
UPDATE "ProtocolSession" SET "key" = repetition::text || ':' || position::text;
ALTER TABLE "ProtocolSession" ALTER COLUMN "key" SET DEFAULT (gen_random_uuid())::text;
ALTER TABLE "ProtocolSession" ALTER COLUMN "key" SET NOT NULL;
DROP INDEX "ProtocolSession_experimentId_repetition_position_key";
CREATE UNIQUE INDEX "ProtocolSession_experimentId_key_key" ON "ProtocolSession"("experimentId", "key");

-- A fork: its parent and the number of the parent's messages it starts from.
ALTER TABLE "ProtocolSession" ADD COLUMN "parentId" TEXT;
ALTER TABLE "ProtocolSession" ADD COLUMN "forkSeq" INTEGER;
ALTER TABLE "ProtocolSession" ADD CONSTRAINT "ProtocolSession_parentId_fkey" FOREIGN KEY ("parentId")
  REFERENCES "ProtocolSession"("id") ON DELETE SET NULL ON UPDATE CASCADE;
CREATE INDEX "ProtocolSession_parentId_idx" ON "ProtocolSession"("parentId");

-- When the run's scheduler handled the session's end. Sessions that ended before stay null: handling
-- one again (a retried end) only queues a successor that is still waiting, as before.
ALTER TABLE "ProtocolSession" ADD COLUMN "scheduledAt" TIMESTAMP(3);

ALTER TABLE "Experiment" ADD COLUMN "schedule" JSONB;

-- Carry-over is PXP's own setting now: it moves into the config of PXP's runs and their sessions (the
-- plugin's extras), so old runs still show it and their agents still read earlier dialogues.
UPDATE "Experiment" SET config = config || jsonb_build_object('carryOver', "carryOver") WHERE protocol = 'pxp';
UPDATE "ProtocolSession" s SET config = s.config || jsonb_build_object('carryOver', e."carryOver")
  FROM "Experiment" e WHERE e.id = s."experimentId" AND s.protocol = 'pxp';
ALTER TABLE "Experiment" DROP COLUMN "carryOver";
