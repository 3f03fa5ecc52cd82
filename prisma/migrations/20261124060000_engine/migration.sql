-- One engine for every protocol (issue: "One engine for every protocol").
-- M gets a canonical `body` (the message as the protocol folds it); seats take the generic SeatFill
-- shape; the people in human seats move to SessionSeat (several per session, claimable seats);
-- session statuses say what is true (queued, waiting for the previous session, cancelled …).

-- AlterTable
ALTER TABLE "ProtocolMessage" ADD COLUMN     "body" JSONB NOT NULL DEFAULT '{}';

-- PXP stored its message in columns, EVINCE in `payload` (with the raw reply beside it).
UPDATE "ProtocolMessage" m SET body = jsonb_build_object(
    'seq', m.seq, 'sender', m.sender, 'tag', m.tag, 'prediction', COALESCE(m.prediction, ''),
    'explanation', COALESCE(m.explanation, ''))
  FROM "ProtocolSession" s WHERE s.id = m."sessionId" AND s.protocol = 'pxp';
UPDATE "ProtocolMessage" m SET body = (m.payload - 'raw') || jsonb_build_object('seq', m.seq),
    payload = CASE WHEN m.payload ? 'raw' THEN jsonb_build_object('raw', m.payload->'raw') ELSE '{}'::jsonb END
  FROM "ProtocolSession" s WHERE s.id = m."sessionId" AND s.protocol = 'evince';

-- Seat fills: {kind, generator, checker} → {kind, model, helpers: {checker}}; an EVINCE judge is the
-- moderator's model; a judge-less moderator is the program "no-judge"; a proxy keeps its checker.
CREATE FUNCTION parley_engine_fill(f jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN f->>'kind' = 'llm' AND f ? 'generator' THEN jsonb_build_object('kind', 'llm', 'model', f->'generator',
      'helpers', CASE WHEN f ? 'checker' THEN jsonb_build_object('checker', f->'checker') ELSE '{}'::jsonb END)
    WHEN f->>'kind' = 'llm' AND f ? 'judge' THEN jsonb_build_object('kind', 'llm', 'model', f->'judge', 'helpers', '{}'::jsonb)
    WHEN f->>'kind' = 'proxy' THEN jsonb_build_object('kind', 'proxy', 'params', '{}'::jsonb,
      'helpers', CASE WHEN f ? 'checker' THEN jsonb_build_object('checker', f->'checker') ELSE '{}'::jsonb END)
    WHEN f->>'kind' = 'program' AND NOT f ? 'program' THEN jsonb_build_object('kind', 'program', 'program', 'no-judge',
      'helpers', '{}'::jsonb, 'params', '{}'::jsonb)
    WHEN f->>'kind' = 'human' THEN f || jsonb_build_object('claimable', false)
    ELSE f END
$$;
CREATE FUNCTION parley_engine_seats(s jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT COALESCE(jsonb_object_agg(key, parley_engine_fill(value)), '{}'::jsonb) FROM jsonb_each(s)
$$;
UPDATE "ProtocolSession" SET seats = parley_engine_seats(seats) WHERE jsonb_typeof(seats) = 'object';
UPDATE "Experiment" SET seats = parley_engine_seats(seats) WHERE jsonb_typeof(seats) = 'object';
DROP FUNCTION parley_engine_seats(jsonb);
DROP FUNCTION parley_engine_fill(jsonb);

-- CreateTable
CREATE TABLE "SessionSeat" (
    "sessionId" TEXT NOT NULL,
    "seat" TEXT NOT NULL,
    "userId" TEXT,
    "claimable" BOOLEAN NOT NULL DEFAULT false,
    "claimedAt" TIMESTAMP(3),

    CONSTRAINT "SessionSeat_pkey" PRIMARY KEY ("sessionId","seat")
);
CREATE INDEX "SessionSeat_userId_idx" ON "SessionSeat"("userId");
ALTER TABLE "SessionSeat" ADD CONSTRAINT "SessionSeat_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "ProtocolSession"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "SessionSeat" ADD CONSTRAINT "SessionSeat_userId_fkey" FOREIGN KEY ("userId") REFERENCES "user"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- The people already in human seats (one per session until now).
INSERT INTO "SessionSeat" ("sessionId", seat, "userId", claimable)
  SELECT s.id, f.key, u.id, false
  FROM "ProtocolSession" s, jsonb_each(s.seats) f
  LEFT JOIN "user" u ON u.id = f.value->>'userId'
  WHERE f.value->>'kind' = 'human';

-- Statuses that say what is true.
ALTER TABLE "ProtocolSession" ADD COLUMN "awaitingSeat" TEXT,
ADD COLUMN "retryCount" INTEGER NOT NULL DEFAULT 0,
ALTER COLUMN "status" SET DEFAULT 'queued';
UPDATE "ProtocolSession" s SET "awaitingSeat" = (
    SELECT p.seat FROM "SessionSeat" p WHERE p."sessionId" = s.id AND p."userId" = s."assigneeId" LIMIT 1)
  WHERE s.status = 'awaiting';
UPDATE "ProtocolSession" s SET status = 'cancelled'
  FROM "Experiment" e WHERE e.id = s."experimentId" AND e.status = 'cancelled' AND s.status <> 'done';
UPDATE "ProtocolSession" SET status = 'queued' WHERE status = 'running';
UPDATE "ProtocolSession" s SET status = 'waiting'
  FROM "Experiment" e
  WHERE e.id = s."experimentId" AND e."carryOver" AND s.status = 'queued'
    AND EXISTS (SELECT 1 FROM "ProtocolSession" p WHERE p."experimentId" = s."experimentId"
                AND p.repetition = s.repetition AND p.position < s.position AND p.status <> 'done');

DROP INDEX "ProtocolSession_assigneeId_status_idx";
ALTER TABLE "ProtocolSession" DROP COLUMN "assigneeId";
CREATE INDEX "ProtocolSession_experimentId_status_idx" ON "ProtocolSession"("experimentId", "status");
