-- sessions.claim-next walks a run's open sessions in the work queue's order and stops at the first
-- seat the person may claim (lib/server/services/sessions.ts, claimNextPicks). One query sorting all
-- of a run's open seats cost ~100 ms at 9,000 slots and saturated the server at 100 annotators
-- (bench:labelling); on these indexes a pick reads a handful of rows.

-- The open sessions of a run in the queue's order. Partial: finished sessions leave it, so a pick
-- late in a run does not step over the done ones. Prisma's schema has no word for a partial index.
CREATE INDEX "ProtocolSession_open_order_idx" ON "ProtocolSession" ("runId", repetition, position, id)
  WHERE status NOT IN ('done', 'cancelled');

-- An item's finished sessions counted from the index alone (the run's fillFirst hint).
DROP INDEX "ProtocolSession_runId_status_idx";
CREATE INDEX "ProtocolSession_runId_status_instanceId_idx" ON "ProtocolSession" ("runId", status, "instanceId");

-- What a person wrote (the distinct-claimants rule: never a second slot of an item they worked on).
CREATE INDEX "ProtocolMessage_authorUserId_idx" ON "ProtocolMessage" ("authorUserId");
