-- A small bookshop for ReHAC's SQL demo tasks (sql-tasks.jsonl). Invented data, written for Parley.
-- Loaded by protocols/rehac/server/sql-env.ts into a schema of its own: names are unqualified here.

CREATE TABLE author (
  id integer PRIMARY KEY,
  name text NOT NULL,
  country text NOT NULL,
  born integer NOT NULL
);

CREATE TABLE book (
  id integer PRIMARY KEY,
  title text NOT NULL,
  author_id integer NOT NULL REFERENCES author(id),
  genre text NOT NULL,
  price numeric(6, 2) NOT NULL,
  published integer NOT NULL,
  stock integer NOT NULL
);

CREATE TABLE customer (
  id integer PRIMARY KEY,
  name text NOT NULL,
  city text NOT NULL,
  joined date NOT NULL
);

CREATE TABLE purchase (
  id integer PRIMARY KEY,
  customer_id integer NOT NULL REFERENCES customer(id),
  purchased_on date NOT NULL
);

CREATE TABLE purchase_item (
  purchase_id integer NOT NULL REFERENCES purchase(id),
  book_id integer NOT NULL REFERENCES book(id),
  quantity integer NOT NULL CHECK (quantity > 0),
  PRIMARY KEY (purchase_id, book_id)
);

INSERT INTO author (id, name, country, born) VALUES
  (1, 'Mira Solberg', 'Norway', 1958),
  (2, 'Tomas Okafor', 'Nigeria', 1971),
  (3, 'Lena Vargas', 'Chile', 1949),
  (4, 'Piet Haverkamp', 'Netherlands', 1983),
  (5, 'Aiko Mori', 'Japan', 1966),
  (6, 'Ruth Calloway', 'Canada', 1990),
  (7, 'Jonas Brekke', 'Norway', 1975),
  (8, 'Selma Aydin', 'Turkey', 1962);

INSERT INTO book (id, title, author_id, genre, price, published, stock) VALUES
  (1, 'The Salt Road', 1, 'mystery', 14.50, 2004, 12),
  (2, 'Winter Ledger', 1, 'mystery', 16.00, 2011, 3),
  (3, 'River of Clocks', 2, 'fantasy', 19.99, 2015, 8),
  (4, 'A Map of Small Rooms', 3, 'literary', 12.00, 1988, 0),
  (5, 'Copper Harbour', 3, 'literary', 13.25, 1995, 5),
  (6, 'The Glass Orchard', 4, 'fantasy', 21.00, 2019, 15),
  (7, 'Quiet Numbers', 5, 'science', 24.90, 2008, 4),
  (8, 'Tides and Tables', 5, 'science', 29.50, 2016, 2),
  (9, 'North of the Lantern', 6, 'mystery', 11.75, 2021, 20),
  (10, 'The Fourth Ferry', 7, 'mystery', 15.00, 2013, 7),
  (11, 'Kestrel Season', 7, 'literary', 17.40, 2018, 9),
  (12, 'Bread for the Crossing', 8, 'literary', 14.00, 2002, 6),
  (13, 'Orbit of Lamps', 2, 'fantasy', 18.50, 2020, 11),
  (14, 'The Patient Engine', 4, 'science', 32.00, 2022, 1),
  (15, 'Harbour Lights', 6, 'mystery', 12.50, 2023, 14);

INSERT INTO customer (id, name, city, joined) VALUES
  (1, 'Ada Lindqvist', 'Oslo', '2021-03-14'),
  (2, 'Bruno Esteves', 'Lisbon', '2022-07-02'),
  (3, 'Chidi Nwosu', 'Lagos', '2020-11-20'),
  (4, 'Dana Whitfield', 'Toronto', '2023-01-09'),
  (5, 'Emre Kaya', 'Istanbul', '2024-05-30'),
  (6, 'Fumiko Sato', 'Osaka', '2019-09-17'),
  (7, 'Greta Holm', 'Oslo', '2025-02-11'),
  (8, 'Hugo Marchetti', 'Lisbon', '2025-06-21');

INSERT INTO purchase (id, customer_id, purchased_on) VALUES
  (1, 1, '2025-01-05'),
  (2, 2, '2025-01-19'),
  (3, 3, '2025-02-02'),
  (4, 1, '2025-02-14'),
  (5, 4, '2025-03-03'),
  (6, 5, '2025-03-22'),
  (7, 6, '2025-03-29'),
  (8, 3, '2025-04-10'),
  (9, 2, '2025-04-18'),
  (10, 7, '2025-05-01'),
  (11, 4, '2025-05-15'),
  (12, 1, '2025-06-08');

INSERT INTO purchase_item (purchase_id, book_id, quantity) VALUES
  (1, 1, 1),
  (1, 7, 1),
  (2, 3, 2),
  (3, 9, 1),
  (3, 13, 1),
  (4, 2, 1),
  (5, 6, 1),
  (5, 15, 2),
  (6, 12, 1),
  (7, 8, 1),
  (7, 7, 1),
  (8, 3, 1),
  (8, 10, 1),
  (9, 5, 1),
  (10, 1, 2),
  (10, 11, 1),
  (11, 14, 1),
  (12, 9, 3),
  (12, 6, 1);
