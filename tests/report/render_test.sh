#!/bin/bash
# The smx eval HTML report rendered by a real browser: writes a sample page
# (make_sample_report), loads it in headless Chromium and checks that every
# expected figure is there, laid out with a non-zero size, and draws its
# marks (curves, histogram outlines, bars) with non-zero geometry. The
# measuring script goes into a test-only copy of the page; the page itself
# has no script and must draw without one.
# Usage: tests/report/render_test.sh MAKE_SAMPLE_REPORT [SCREENSHOT.png]
# Exit 77 (ctest SKIP) only when no Chromium is installed.
set -u
MAKE=$1
SHOT=${2:-}
CHROMIUM=""
for c in chromium chromium-browser google-chrome; do
  if command -v "$c" >/dev/null 2>&1; then CHROMIUM=$(command -v "$c"); break; fi
done
if [ -z "$CHROMIUM" ]; then echo "SKIP: no chromium installed"; exit 77; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

"$MAKE" "$tmp/report.html" 3000 || { echo "FAIL make_sample_report exited $?"; exit 1; }
page="$tmp/report.html"
grep -q "<script" "$page" && bad "the page itself holds a script" || ok
grep -Eq '(src|href)=' "$page" && bad "the page refers to an external resource" || ok

# The test-only copy: measure every figure after layout and write the result
# into the DOM that --dump-dom prints.
cat >"$tmp/check.js" <<'JS'
(function () {
  var out = [];
  document.querySelectorAll("svg.smx-fig").forEach(function (svg) {
    var r = svg.getBoundingClientRect(), bb = svg.getBBox(), texts = 0, marks = [];
    /* the marks of each kind that have a non-zero extent */
    ["polyline.curve", "path.bars", "rect.acc", "rect.gap", "rect.count"].forEach(function (sel) {
      var k = 0;
      svg.querySelectorAll(sel).forEach(function (el) {
        var b = el.getBBox();
        if (b.width > 0 && b.height > 0) k++;
      });
      marks.push(k);
    });
    svg.querySelectorAll("text").forEach(function (t) { if (t.getComputedTextLength() > 0) texts++; });
    out.push(["FIG", svg.dataset.fig, svg.dataset.name, Math.round(r.width), Math.round(r.height),
              Math.round(bb.width), Math.round(bb.height), texts, marks.join(" ")].join("|"));
  });
  /* the first screen (1280 x 900): the lead table with its marked cells and the ROC overlay */
  var t = document.querySelector(".lead table"), o = document.querySelector("svg[data-fig=roc-overlay]");
  if (t && o)
    out.push(["LEAD", Math.round(t.getBoundingClientRect().bottom), Math.round(o.getBoundingClientRect().bottom),
              t.querySelectorAll("td.best").length].join("|"));
  /* the calibration verdict on the first screen */
  var v = document.querySelector(".verdict");
  if (v) out.push(["VERDICT", Math.round(v.getBoundingClientRect().bottom), v.dataset.verdict].join("|"));
  /* metric keys in the table headers: each on one line (a key cut at "_" or mid-word reads as two) */
  var wrapped = 0, keys = 0;
  document.querySelectorAll("table.smx-table th").forEach(function (th) {
    /* wrapped when the pieces of the key sit on more than one line */
    if (!th.firstChild || !th.textContent.length) return;
    var r = document.createRange(), tops = {};
    r.selectNodeContents(th);
    Array.prototype.forEach.call(r.getClientRects(), function (q) { if (q.width > 0) tops[Math.round(q.top)] = 1; });
    keys++;
    if (Object.keys(tops).length > 1) wrapped++;
  });
  out.push(["KEYS", keys, wrapped].join("|"));
  out.push(["PAGE", Math.round(document.documentElement.scrollHeight)].join("|"));
  var pre = document.createElement("pre");
  pre.id = "smx-check";
  pre.textContent = out.join("\n");
  document.body.appendChild(pre);
})();
JS
awk -v js="$tmp/check.js" '/<\/body>/ { print "<script>"; while ((getline l < js) > 0) print l; print "</script>" } { print }' \
  "$page" >"$tmp/check.html"

run_chromium() {
  timeout 120 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$tmp/profile" --virtual-time-budget=2000 --window-size=1280,900 "$@" 2>"$tmp/chromium.err"
}
run_chromium --dump-dom "file://$tmp/check.html" >"$tmp/dom.html"
rc=$?
[ $rc = 0 ] || { bad "chromium exited $rc"; tail -5 "$tmp/chromium.err"; }
grep '^FIG|\|FIG|' "$tmp/dom.html" | sed 's/.*\(FIG|\)/\1/; s/<.*//' >"$tmp/figs.txt"
lead=$(grep -o 'LEAD|[0-9|]*' "$tmp/dom.html" | head -1)
IFS='|' read -r _ tbottom obottom nbest <<<"$lead"
[ -n "$lead" ] && [ "$tbottom" -le 900 ] && [ "$obottom" -le 900 ] && [ "$nbest" -ge 3 ] && ok ||
  bad "first screen: lead table and overlay end at '$tbottom' and '$obottom' px (want <= 900), $nbest marked cells"
keys=$(grep -o 'KEYS|[0-9|]*' "$tmp/dom.html" | head -1)
IFS='|' read -r _ nkeys nwrapped <<<"$keys"
[ -n "$keys" ] && [ "$nkeys" -ge 5 ] && [ "$nwrapped" = 0 ] && ok || bad "table headers: $nwrapped of $nkeys keys wrapped"

# kind|name|the least number of curves, histogram outlines, accuracy bars,
# gap bars and count bars with a non-zero extent. The sample has three
# scores (the MSP one with an empty OOD set, the constant one with a single
# curve) and three calibration sets, the second without a finite temperature
# (no "after" diagram), the third pre-binned into 20 bins; the confidences
# fill 11 to 13 of 15 bins, and 14 or more of 20.
expected='roc-overlay|svhn_logits.npy|3 0 0 0 0
roc-overlay|near-ood &lt;cifar100&gt;.npy|2 0 0 0 0
roc-overlay|empty.npy|0 0 0 0 0
roc|Energy (T=1)|2 0 0 0 0
hist|Energy (T=1)|0 3 0 0 0
roc|MSP|2 0 0 0 0
hist|MSP|0 3 0 0 0
roc|constant|1 0 0 0 0
hist|constant|0 2 0 0 0
reliability-before|ID test set|0 0 10 6 10
reliability-after|ID test set|0 0 10 6 10
reliability-before|ID test set, all predictions right|0 0 10 6 10
reliability-before|ID test set, pre-binned (20 bins)|0 0 12 6 12
reliability-after|ID test set, pre-binned (20 bins)|0 0 12 6 12'
nfig=$(wc -l <"$tmp/figs.txt")
[ "$nfig" = 14 ] && ok || bad "$nfig figures measured, want 14"
while IFS='|' read -r kind name want; do
  line=$(awk -F'|' -v k="$kind" -v n="$name" '$2 == k && $3 == n' "$tmp/figs.txt" | head -1)
  if [ -z "$line" ]; then bad "figure $kind '$name' missing"; continue; fi
  IFS='|' read -r _ _ _ w h bw bh texts marks <<<"$line"
  if [ "$w" -ge 250 ] && [ "$h" -ge 300 ] && [ "$bw" -ge 250 ] && [ "$bh" -ge 300 ]; then ok
  else bad "figure $kind '$name' laid out at ${w}x${h}, drawing ${bw}x${bh}"; fi
  read -r -a got <<<"$marks"
  read -r -a need <<<"$want"
  short=0
  for i in 0 1 2 3 4; do [ "${got[$i]:-0}" -ge "${need[$i]}" ] || short=1; done
  [ $short = 0 ] && ok || bad "figure $kind '$name': marks (curves outlines acc gap count) '$marks', want at least '$want'"
  [ "$texts" -ge 10 ] && ok || bad "figure $kind '$name': $texts visible texts"
done <<<"$expected"
# the figures are in the page itself, visible without the script
n=$(grep -c '<svg xmlns="http://www.w3.org/2000/svg" class="smx-fig"' "$page")
[ "$n" = 14 ] && ok || bad "$n svg figures in the page"
grep -q 'class="smx-missing" data-fig="reliability-after"' "$tmp/dom.html" && ok || bad "missing-after note"

# smx eval's own report of data/digits-ood (when the command is built next to this tool): its first
# screen (1280 x 900) holds the calibration verdict, the OOD table with marked cells and the ROC
# overlay of every score, and no metric key in a header wraps
SMX=$(dirname "$MAKE")/../programs/smx
DATA=$(cd "$(dirname "$0")/../../data/digits-ood" && pwd)
if [ -x "$SMX" ]; then
  "$SMX" eval --id "$DATA/id_logits.npy" --ood "$DATA/ood_logits.npy" --labels "$DATA/id_labels.npy" \
    --val "$DATA/val_logits.npy" --val-labels "$DATA/val_labels.npy" --report "$tmp/eval.html" -q >/dev/null ||
    bad "smx eval --report exited $?"
  awk -v js="$tmp/check.js" '/<\/body>/ { print "<script>"; while ((getline l < js) > 0) print l; print "</script>" } { print }' \
    "$tmp/eval.html" >"$tmp/eval_check.html"
  run_chromium --dump-dom "file://$tmp/eval_check.html" >"$tmp/eval_dom.html"
  lead=$(grep -o 'LEAD|[0-9|]*' "$tmp/eval_dom.html" | head -1)
  IFS='|' read -r _ tbottom obottom nbest <<<"$lead"
  [ -n "$lead" ] && [ "$tbottom" -le 900 ] && [ "$obottom" -le 900 ] && [ "$nbest" -ge 7 ] && ok ||
    bad "eval report's first screen: table and overlay end at '$tbottom' and '$obottom' px, $nbest marked cells"
  # ... and answers "is the model calibrated" there too (digits-ood: under-confident, T = 0.143)
  verdict=$(grep -o 'VERDICT|[^<]*' "$tmp/eval_dom.html" | head -1)
  IFS='|' read -r _ vbottom vword <<<"$verdict"
  [ -n "$verdict" ] && [ "$vbottom" -le 900 ] && [ "$vword" = under-confident ] && ok ||
    bad "eval report's calibration verdict: '$verdict' (want under-confident, ending above 900 px)"
  keys=$(grep -o 'KEYS|[0-9|]*' "$tmp/eval_dom.html" | head -1)
  IFS='|' read -r _ nkeys nwrapped <<<"$keys"
  [ -n "$keys" ] && [ "$nkeys" -ge 15 ] && [ "$nwrapped" = 0 ] && ok || bad "eval report: $nwrapped of $nkeys keys wrapped"
  grep -q 'data-xscale="log"' "$tmp/eval.html" && ok || bad "eval report: the ROC overlay is not on a log-FPR axis"
  height=$(grep -o 'PAGE|[0-9]*' "$tmp/eval_dom.html" | head -1 | cut -d'|' -f2)
  [ -n "$height" ] && [ "$height" -le 4500 ] && ok || bad "eval report is $height px tall (want <= 4500)"
  nrel=$(grep -c '^FIG|reliability' "$tmp/eval_dom.html")
  [ "$nrel" = 2 ] && ok || bad "eval report: $nrel reliability diagrams measured, want 2"
  [ -n "$SHOT" ] && run_chromium --screenshot="${SHOT%.png}_eval.png" "file://$tmp/eval.html" >/dev/null
fi

# a screenshot: Chromium paints the page (kept when a path was given)
png="${SHOT:-$tmp/shot.png}"
run_chromium --screenshot="$png" "file://$page" >/dev/null
size=$(stat -c %s "$png" 2>/dev/null || echo 0)
[ "$size" -gt 50000 ] && ok || bad "screenshot of $size bytes"

echo "report_render: $pass passed, $fail failed"
[ $fail = 0 ]
