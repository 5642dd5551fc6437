#!/bin/sh
# Re-create the vendored JavaScript of the lineage graph from the pinned manifest
# (package.json, package-lock.json) with npm. Development time only: the viewer never
# fetches anything at run time, and CI does not need npm (the files are committed).
#
#   sh webviewer/static/vendor/update.sh          # same versions, from package-lock.json
#   UPGRADE=1 sh webviewer/static/vendor/update.sh  # newest versions allowed by package.json
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$work/"
if [ "${UPGRADE:-0}" = 1 ] || [ ! -f "$here/package-lock.json" ]; then
    (cd "$work" && npm install --ignore-scripts --no-audit --no-fund)
else
    cp "$here/package-lock.json" "$work/"
    (cd "$work" && npm ci --ignore-scripts --no-audit --no-fund)
fi
modules="$work/node_modules"
cp "$modules/cytoscape/dist/cytoscape.min.js" "$here/cytoscape.min.js"
# cytoscape-dagre's bundle holds dagre and graphlib (@dagrejs) as well; @dagrejs/dagre is
# listed in package.json only for their licence files
cp "$modules/cytoscape-dagre/dist/cytoscape-dagre.min.js" "$here/cytoscape-dagre.min.js"
cp "$modules/cytoscape/LICENSE" "$here/LICENSE-cytoscape.txt"
cp "$modules/cytoscape-dagre/LICENSE" "$here/LICENSE-cytoscape-dagre.txt"
cp "$modules/@dagrejs/dagre/LICENSE" "$here/LICENSE-dagre.txt"
cp "$modules/@dagrejs/graphlib/LICENSE" "$here/LICENSE-graphlib.txt"
cp "$work/package-lock.json" "$here/package-lock.json"
(cd "$work" && npm ls --all) | sed 1d > "$here/VERSIONS.txt"
echo "vendored into $here:"
ls -l "$here"
