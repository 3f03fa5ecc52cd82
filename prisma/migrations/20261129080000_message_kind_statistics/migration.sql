-- Statistics on a message's kind (body->>'kind'): the labelling pages filter their labels by it
-- (protocols/labelling/server/pages.ts). Without them PostgreSQL guessed 0.5 % of the messages match,
-- and over 10,000 items × 3 labels planned a nested loop of 30,000 index lookups (labelCells 600 ms,
-- the agreement page over 1 s under load, bench:labelling); with them, hash joins (labelCells ~240 ms).
-- Statistics cost nothing on writes (ANALYZE fills them); Prisma's schema has no word for them.
CREATE STATISTICS "ProtocolMessage_body_kind_stat" ON ((body ->> 'kind')) FROM "ProtocolMessage";
ANALYZE "ProtocolMessage";
