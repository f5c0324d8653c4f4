"""Writes torchstrategy/unicode_scripts.txt, the code point -> ICU UScriptCode table of tf.strings.unicode_script.

TF 2.21 calls ICU's uscript_getScript, whose data is Unicode 13.0 (its largest code is 192, Yezidi, and every code
point of Unicode 14+ scripts is Unknown there). The Script property comes from Unicode's Scripts-13.0.0.txt as
fontTools ships it (fonttools 4.26.2, fontTools/unicodedata/Scripts.py: RANGES and their ISO 15924 VALUES), and each
ISO 15924 code is given ICU's UScriptCode number (the enum in ICU's unicode/uscript.h). Run, in a scratch venv:

    python -m venv /tmp/uvenv && /tmp/uvenv/bin/pip download --no-deps -d /tmp/ft fonttools==4.26.2
    unzip /tmp/ft/*.whl 'fontTools/unicodedata/Scripts.py' -d /tmp/ft/x
    python tools/unicode_script_table.py /tmp/ft/x/fontTools/unicodedata/Scripts.py

The file holds one line per run of code points with one script: '<first code point, hex> <UScriptCode>', each run
lasting to the next line's first code point (the last to U+10FFFF). tests/test_strings_unicode.py checks it
against TF's values (tools/tf_reference/unicode_script_reference.py)."""
from __future__ import annotations

import importlib.util
import os
import sys

#: ISO 15924 code -> ICU UScriptCode (ICU's uscript.h, the enum up to ICU 78)
ICU_SCRIPT_CODES = dict(zip(
    "Zyyy Zinh Arab Armn Beng Bopo Cher Copt Cyrl Dsrt Deva Ethi Geor Goth Grek Gujr Guru Hani Hang Hebr Hira Knda "
    "Kana Khmr Laoo Latn Mlym Mong Mymr Ogam Ital Orya Runr Sinh Syrc Taml Telu Thaa Thai Tibt Cans Yiii Tglg Hano "
    "Buhd Tagb Brai Cprt Limb Linb Osma Shaw Tale Ugar Hrkt Bugi Glag Khar Sylo Talu Tfng Xpeo Bali Batk Blis Brah "
    "Cham Cirt Cyrs Egyd Egyh Egyp Geok Hans Hant Hmng Hung Inds Java Kali Latf Latg Lepc Lina Mand Maya Mero Nkoo "
    "Orkh Perm Phag Phnx Plrd Roro Sara Syre Syrj Syrn Teng Vaii Visp Xsux Zxxx Zzzz Cari Jpan Lana Lyci Lydi Olck "
    "Rjng Saur Sgnw Sund Moon Mtei Armi Avst Cakm Kore Kthi Mani Phli Phlp Phlv Prti Samr Tavt Zmth Zsym Bamu Lisu "
    "Nkgb Sarb Bass Dupl Elba Gran Kpel Loma Mend Merc Narb Nbat Palm Sind Wara Afak Jurc Mroo Nshu Shrd Sora Takr "
    "Tang Wole Hluw Khoj Tirh Aghb Mahj Ahom Hatr Modi Mult Pauc Sidd Adlm Bhks Marc Newa Osge Hanb Jamo Zsye Gonm "
    "Soyo Zanb Dogr Gong Maka Medf Rohg Sogd Sogo Elym Hmnp Nand Wcho Chrs Diak Kits Yezi Cpmn Ougr Tnsa Toto Vith "
    "Kawi Nagm Aran Gara Gukh Krai Onao Sunu Todr Tutg Berf Chis Sidt Tayo Tols".split(), range(213)))
UNKNOWN = ICU_SCRIPT_CODES["Zzzz"]
OUT = os.path.join(os.path.dirname(__file__), "..", "torchstrategy", "unicode_scripts.txt")


def runs(starts: list, scripts: list) -> list:
    """(first code point, UScriptCode) per run, neighbouring ranges of one code merged."""
    merged: list = []
    for start, script in zip(starts, scripts):
        code = ICU_SCRIPT_CODES[script]
        if not merged or merged[-1][1] != code:
            merged.append((start, code))
    return merged


def main(scripts_py: str) -> None:
    spec = importlib.util.spec_from_file_location("unicode_scripts_source", scripts_py)
    source = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(source)
    table = runs(list(source.RANGES), list(source.VALUES))
    with open(OUT, "w", encoding="ascii") as handle:
        handle.write("".join(f"{start:x} {code}\n" for start, code in table))
    print(f"{len(table)} runs written to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main(sys.argv[1])
