-- SessionSeat is the one record of who sits where: a claim no longer copies the claimant into the
-- session's seats JSON. Claims made before are taken out of it (the SessionSeat row keeps them).
UPDATE "ProtocolSession" s
SET seats = (
  SELECT jsonb_object_agg(
           e.key,
           CASE WHEN jsonb_typeof(e.value) = 'object'
                 AND EXISTS (SELECT 1 FROM "SessionSeat" p
                             WHERE p."sessionId" = s.id AND p.seat = e.key AND p.claimable AND p."claimedAt" IS NOT NULL)
                THEN e.value - 'userId' ELSE e.value END)
  FROM jsonb_each(s.seats) AS e
)
WHERE jsonb_typeof(s.seats) = 'object'
  AND EXISTS (SELECT 1 FROM "SessionSeat" p
              WHERE p."sessionId" = s.id AND p.claimable AND p."claimedAt" IS NOT NULL
                AND jsonb_typeof(s.seats -> p.seat) = 'object' AND (s.seats -> p.seat) ? 'userId');
