-- A run's limit of sessions on the step queue at once (null: no limit).
ALTER TABLE "Experiment" ADD COLUMN "maxInFlight" INTEGER;
