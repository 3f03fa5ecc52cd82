-- The sessions of one instance of a run: the work queue asks it for every claimable seat it offers (a
-- run with distinct claimants never offers a second session of an item the person took; the fillFirst
-- hint counts an item's finished sessions). Without it each lookup scanned the run's sessions: My work
-- took 4.6 s for one annotator over 3,000 slots, and 43 s over 9,000 (bench:labelling, annotators).
-- CreateIndex
CREATE INDEX "ProtocolSession_runId_instanceId_idx" ON "ProtocolSession"("runId", "instanceId");
