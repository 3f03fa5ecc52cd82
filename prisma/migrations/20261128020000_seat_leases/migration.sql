-- A claim of a claimable seat is a lease: it lapses at "leaseUntil" unless renewed (null: held for
-- good, as a seat named for a person is). A lapsed lease counts as free when read; nothing reaps it.
ALTER TABLE "SessionSeat" ADD COLUMN "leaseUntil" TIMESTAMPTZ(3);
-- Claims made before leases existed stay held for good (leaseUntil null), as they behaved.

-- Run options for claimable seats: one person never holds two sessions of one instance, and the work
-- queue offers the sessions of instances with fewer than N finished sessions first.
ALTER TABLE "Experiment" ADD COLUMN "distinctClaimants" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "Experiment" ADD COLUMN "fillFirst" INTEGER;
