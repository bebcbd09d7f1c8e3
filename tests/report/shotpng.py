"""The screenshot tests' PNG reader (tests/report/screenshot.inc): the decoded
scanlines of an 8-bit RGB or RGBA PNG (zlib and the five scanline filters), and
the check that a picture is not (nearly) one colour. Standard library only."""
import struct
import sys
import zlib


def png_rows(path):
    """w, h, bytes per pixel and a generator of the decoded scanlines (bytearrays)"""
    data = open(path, "rb").read()
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                sys.exit("unexpected PNG format depth %d colour type %d" % (depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp

    def lines():
        prev = bytearray(stride)
        for y in range(h):
            f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                if f == 1: line[i] = (line[i] + a) & 255
                elif f == 2: line[i] = (line[i] + b) & 255
                elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
                elif f == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            yield line
            prev = line

    return w, h, bpp, lines()


def not_one_colour(counts, w, h):
    """counts: pixels per RGB colour; exits unless there are 16 colours or more and none covers 97%"""
    top = max(counts.values()) / float(w * h)
    if len(counts) < 16 or top > 0.97:
        sys.exit("screenshot is (nearly) one colour")
