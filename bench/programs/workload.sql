-- Scripted sqlite3 workload; the runner replaces @N@ with the row count.
PRAGMA cache_size = -2000;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, name TEXT, body TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < @N@)
INSERT INTO t(k, name, body)
  SELECT (x * 7919) % 1000, printf('name%06d', (x * 104729) % @N@), printf('%.*c', x % 200 + 10, 'b')
  FROM c;
CREATE INDEX t_k ON t(k);
CREATE INDEX t_name ON t(name);
SELECT k % 10, count(*), sum(length(body)), min(name), max(name) FROM t GROUP BY k % 10 ORDER BY 1;
UPDATE t SET body = body || name WHERE k % 3 = 0;
DELETE FROM t WHERE k % 7 = 0;
SELECT count(*), sum(length(body)) FROM t;
SELECT group_concat(name, ',') FROM (SELECT name FROM t ORDER BY name DESC LIMIT 50);
SELECT a.k, count(*) FROM t a JOIN t b ON a.k = b.k AND a.id < b.id WHERE a.k < 20 GROUP BY a.k ORDER BY a.k;
