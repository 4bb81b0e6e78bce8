#!/usr/bin/env bash
# Run the generative migration test (tests/kafka/test_generative_migrations.py) over many seeds, with shrinking,
# against the live MariaDB, PostgreSQL, Kafka + Debezium, DuckDB and BigQuery emulator stack.
#
#   scripts/soak-migrations.sh [--seed N] [--seeds COUNT] [--steps N] [--examples N] [--open-defects LIST|all]
#                              [--types LIST] [--current view|table]
#
# --seed is the first seed (default 0), --seeds how many consecutive seeds (default 10), --steps the steps of each
# example (default 20), --examples the examples (tables) per seed (default 5), --types the types ADD COLUMN draws
# (comma-separated names of tests/kafka/generative_support.py's TYPES; default all), --current the one mode of
# <table>_current both warehouses keep (default: a view on one, a table on the other, swapped on odd seeds).  It prints, per seed, the migrations
# and writes drawn (every "drawn:" line of the log, shrinking's included; the ADD COLUMNs whose default the source
# converts when it fills the rows already there counted apart) and the differences found, then the totals and how often
# each rule of the real tools' migrations was drawn (`rules`); a failing seed's minimal steps are printed as SQL in
# its log (soak-<seed>.log in $SOAK_LOGS, default /tmp/uniview-soak).  Exit code 1 when any seed found a difference.
set -uo pipefail
cd "$(dirname "$0")/.."

first=0 seeds=10 steps=20 examples=5 open="${UNIVIEW_GEN_OPEN_DEFECTS:-}" types="${UNIVIEW_GEN_TYPES:-}"
current="${UNIVIEW_GEN_CURRENT:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) first=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --examples) examples=$2; shift 2 ;;
    --open-defects) open=$2; shift 2 ;;
    --types) types=$2; shift 2 ;;
    --current) current=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
logs=${SOAK_LOGS:-/tmp/uniview-soak}
mkdir -p "$logs"
drawn_total=0 migrations_total=0 converted_total=0 refused_total=0 failed=0 run_logs=()
#: name|pattern of a `drawn:` line: the rules of the migrations real tools write, counted over the run's logs.
rules=(
  "RENAME TABLE / ALTER TABLE ... RENAME TO|^drawn: rename table"
  "gh-ost swap|^drawn: gh-ost: swap"
  "pt-online-schema-change swap|^drawn: pt-online-schema-change: swap"
  "PostgreSQL partitioned table|^drawn: create .*, PostgreSQL's partitioned"
  "table named non-ASCII, mixed case or with a space|^drawn: create '([^g]|g[^0-9])"
  "column named non-ASCII, mixed case, a keyword or with a space|^drawn: add .* named '"
  "ADD COLUMN FIRST|^drawn: add .* first"
  "POINT / interval|^drawn: add point"
  "BIT / integer[]|^drawn: add bit"
  "key redefined|^drawn: redefine key"
  "STORED generated column|^drawn: add (again .* )?generated"
)
for seed in $(seq "$first" $((first + seeds - 1))); do
  log="$logs/soak-$seed.log"
  run_logs+=("$log")
  UNIVIEW_GEN_SEED=$seed UNIVIEW_GEN_STEPS=$steps UNIVIEW_GEN_EXAMPLES=$examples UNIVIEW_GEN_OPEN_DEFECTS=$open UNIVIEW_GEN_TYPES=$types UNIVIEW_GEN_CURRENT=$current \
    .venv/bin/python -m pytest -p no:cacheprovider -q -s tests/kafka/test_generative_migrations.py >"$log" 2>&1
  status=$?
  drawn=$(grep -c '^drawn: ' "$log" || true)
  migrations=$(grep -cE '^drawn: (add|drop|rename|type|truncate|change|redefine|enum|gh-ost: swap|pt-online-schema-change: swap)' "$log" || true)
  converted=$(grep -c '^drawn: add .*, stored converted$' "$log" || true)
  refused=$(sed -n 's/^refused statements (no-op steps): //p' "$log" | tail -1)
  drawn_total=$((drawn_total + drawn)) migrations_total=$((migrations_total + migrations))
  converted_total=$((converted_total + converted)) refused_total=$((refused_total + ${refused:-0}))
  if [ "$status" -eq 0 ]; then
    echo "seed $seed: $drawn steps drawn ($migrations migrations, $converted with a default the source converts), ${refused:-0} refused by a source, 0 differences"
  else
    failed=$((failed + 1))
    echo "seed $seed: $drawn steps drawn ($migrations migrations, $converted with a default the source converts), DIFFERENCE FOUND (minimal steps in $log)"
  fi
done
echo "total: $seeds seeds, $drawn_total steps drawn ($migrations_total migrations, $converted_total of them ADD COLUMNs" \
  "with a default the source converts; the rest writes)," \
  "$refused_total refused, $failed with differences"
echo "rules:"
for rule in "${rules[@]}"; do
  echo "  ${rule%%|*}: $(cat "${run_logs[@]}" | grep -cE "${rule#*|}")"
done
[ "$failed" -eq 0 ]
