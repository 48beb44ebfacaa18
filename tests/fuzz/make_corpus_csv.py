#!/usr/bin/python3
"""Writes the seed corpus of fuzz_csv_roundtrip into corpus/csv_roundtrip/.

Run from this directory: /usr/bin/python3 make_corpus_csv.py
Each seed is parsed by the target both as CSV and as TSV, so the set mixes
both separators: well-formed tables with the values that are hard to keep
(-0.0, subnormals, +-inf, NaN, 17-digit numbers, hex floats), the line
endings and comments the reader accepts, and text it must refuse.
"""
import os

OUT = "corpus/csv_roundtrip"

seeds = {
    "csv-2x3": "1,2,3\n4,5,6\n",
    "tsv-2x3": "1\t2\t3\n4\t5\t6\n",
    "csv-specials": "nan,-nan,inf,-inf\n-0.0,0,4.9406564584124654e-324,-2.2250738585072009e-308\n",
    "tsv-specials": "NaN\tINF\t-Infinity\tnan(0x1)\n1e-320\t-1e-310\t1.7976931348623157e308\t2e308\n",
    "csv-17-digits": "0.10000000000000001,0.33333333333333331,2.7182818284590451\n",
    "csv-hex": "0x1p-1074,-0x1.fffffffffffffp+1023,0x1.8p1\n",
    "csv-f16-edges": "65504,65520,6.1035156e-05,5.9604645e-08,2.98e-08\n",
    "csv-f32-edges": "3.4028235e38,3.4028236e38,1.4e-45,7e-46,16777217\n",
    "csv-column": "1\n2\n-3.5\n",
    "csv-comments-blank": "# header\n\n  1 , 2 \n#x\n\t3,4\t\n",
    "csv-crlf": "1,2\r\n3,4\r\n",
    "csv-no-final-newline": "1,2\n3,4",
    "tsv-spaces": " 1 \t 2 \n3\t4\n",
    "bad-empty-value": "1,,3\n",
    "bad-extra-value": "1,2\n3,4,5\n",
    "bad-missing-value": "1,2,3\n4,5\n",
    "bad-word": "1,abc\n",
    "bad-nul": "1,2\x003\n",
    "bad-nothing": "# only a comment\n\n",
    "bad-empty": "",
    "bad-trailing-sep": "1,2,\n",
    "bad-long-token": "1," + "9" * 60 + "x\n",
}
os.makedirs(OUT, exist_ok=True)
for name, text in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(text.encode("latin-1"))
