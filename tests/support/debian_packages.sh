#!/usr/bin/env bash
# The Debian packages each of the tests' machine parts needs, installed where missing: the one place that says
# which packages a part needs and how to tell they are there (start_postgres.sh, slurm.sh and `make chromium` call it).
#
#   bash tests/support/debian_packages.sh install PART...   PART: postgres, chromium or slurm
#
# Several parts at once share one `apt-get update` and one `apt-get install` (CI installs all three beside its
# lint: each apt-get run of its own repeated the package lists' download and dpkg's start). Needs root.
set -euo pipefail

missing() {
    case "$1" in
    postgres) ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || echo postgresql ;;
    chromium) test -x /usr/bin/chromium || echo chromium ;;
    slurm)
        # submitit reads job states with `sacct`, which needs slurmdbd and its accounting database (MariaDB)
        command -v slurmctld >/dev/null || echo slurm-wlm
        command -v slurmdbd >/dev/null || echo slurmdbd
        command -v munged >/dev/null || echo munge
        command -v mariadbd >/dev/null || echo mariadb-server
        ;;
    esac
}

[ "${1:-}" = install ] || { echo "usage: debian_packages.sh install PART..." >&2; exit 2; }
shift
for part in "$@"; do
    case "$part" in
    postgres | chromium | slurm) ;;
    *)
        echo "debian_packages.sh: unknown part '$part' (postgres, chromium or slurm)" >&2
        exit 2
        ;;
    esac
done
packages=()
for part in "$@"; do
    read -r -a needed <<<"$(missing "$part" | tr '\n' ' ')"
    packages+=("${needed[@]}")
done
if ((${#packages[@]})); then
    echo "debian_packages.sh: installing ${packages[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi
