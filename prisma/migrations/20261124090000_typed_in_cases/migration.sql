-- Typed-in EVINCE cases were kept in a dataset of kind 'cases' named "Single cases", which the
-- debate form then offered (and preselected) as a case set. They get their own kind.
UPDATE "Dataset" SET kind = 'typed-cases', name = 'Typed-in cases'
WHERE kind = 'cases' AND name = 'Single cases' AND source = 'typed in';
