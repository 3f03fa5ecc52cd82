-- The generic message row named PXP's projections (tag, prediction, explanation); every protocol
-- writes them, so they get neutral names. A rename keeps the data (no copy, no rewrite of the table).
ALTER TABLE "ProtocolMessage" RENAME COLUMN "tag" TO "label";
ALTER TABLE "ProtocolMessage" RENAME COLUMN "prediction" TO "value";
ALTER TABLE "ProtocolMessage" RENAME COLUMN "explanation" TO "detail";
