;; The two passes over every byte of a long JSON string literal (a tool output), in WebAssembly
;; with 128-bit SIMD: `scan` validates and measures a literal as core/json-literal.ts
;; `scanLiteral` does, `unescape` writes its UTF-8 as `unescapeLiteral` does. In JavaScript both
;; look at one byte at a time (~2 ns a byte here); these look at 16 and stop only at the bytes
;; that need a decision. The JavaScript functions are the reference: test/core-literal-kernel
;; holds these equal to them, and core/literal-kernel.ts copies a literal into this memory,
;; calls them and reads the results back.
;;
;; Memory: four byte tables at fixed offsets, filled by core/literal-kernel.ts from the
;; JavaScript's own (so each fact stays defined once, there): at 0, a byte's value as a hex digit
;; (0xff: none); at 256, the JSON characters JSON.stringify writes for a code unit below 0x80; at
;; 384, the unit a two-character escape's letter spells (0xff: none); at 640, 1 for the bytes
;; contentHash cuts before a line feed. Everything from 1024 on is the caller's. Every 16-byte load or store may pass the region's end by up to 15 bytes: the caller
;; leaves 16 bytes free after each region.
;;
;; Built into core/literal-kernel-wasm.ts by `npm run wasm` (scripts/build-wasm.mjs).
(module
  (memory (export "memory") 1)

  ;; What `scan` measured, read by the caller after it returns.
  (global $rawUnits (export "rawUnits") (mut i32) (i32.const 0))
  (global $escapedBytes (export "escapedBytes") (mut i32) (i32.const 0))
  (global $escapedUnits (export "escapedUnits") (mut i32) (i32.const 0))
  (global $escapedJson (export "escapedJson") (mut i32) (i32.const 0))
  (global $escapedUtf8 (export "escapedUtf8") (mut i32) (i32.const 0))
  (global $lone (export "lone") (mut i32) (i32.const 0))
  (global $canonical (export "canonical") (mut i32) (i32.const 1))
  ;; What `unescape` noted: how many line-feed offsets it wrote, and where an invalid escape is.
  (global $lineFeeds (export "lineFeeds") (mut i32) (i32.const 0))
  (global $errorAt (export "errorAt") (mut i32) (i32.const 0))

  ;; The code unit spelt by the four hex digits at $at, or -1.
  (func $hex4 (param $at i32) (result i32)
    (local $a i32) (local $b i32) (local $c i32) (local $d i32)
    (local.set $a (i32.load8_u (i32.load8_u (local.get $at))))
    (local.set $b (i32.load8_u (i32.load8_u offset=1 (local.get $at))))
    (local.set $c (i32.load8_u (i32.load8_u offset=2 (local.get $at))))
    (local.set $d (i32.load8_u (i32.load8_u offset=3 (local.get $at))))
    ;; A digit is 0-15, a non-digit 0xff: their union is above 15 exactly when one is not a digit.
    (if (i32.gt_u (i32.or (i32.or (local.get $a) (local.get $b)) (i32.or (local.get $c) (local.get $d))) (i32.const 15))
      (then (return (i32.const -1))))
    (i32.or
      (i32.or (i32.shl (local.get $a) (i32.const 12)) (i32.shl (local.get $b) (i32.const 8)))
      (i32.or (i32.shl (local.get $c) (i32.const 4)) (local.get $d))))

  ;; 1 when none of the four hex digits at $at is an uppercase letter (JSON.stringify writes lowercase).
  (func $lowercaseHex (param $at i32) (result i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $at) (i32.const 4)))
    (loop $digit
      (if (i32.le_u (i32.sub (i32.load8_u (local.get $at)) (i32.const 0x41)) (i32.const 5))
        (then (return (i32.const 0))))
      (local.set $at (i32.add (local.get $at) (i32.const 1)))
      (br_if $digit (i32.lt_u (local.get $at) (local.get $end))))
    (i32.const 1))

  ;; Bits of the 16 bytes at $at that are past $limit (all of them when $at >= $limit).
  (func $pastLimit (param $at i32) (param $limit i32) (result i32)
    (local $left i32)
    (local.set $left (i32.sub (local.get $limit) (local.get $at)))
    (if (result i32) (i32.ge_s (local.get $left) (i32.const 16))
      (then (i32.const 0))
      (else (i32.shl (i32.const -1) (select (local.get $left) (i32.const 0) (i32.gt_s (local.get $left) (i32.const 0)))))))

  ;; Validates and measures the literal whose opening quote is at $start, reading no further than
  ;; $limit: the offset just past its closing quote, or -1 where JSON.parse would reject it. The
  ;; counts are those of scanLiteral, left in the globals.
  (func (export "scan") (param $start i32) (param $limit i32) (result i32)
    (local $i i32) (local $v v128) (local $stops i32) (local $n i32) (local $before i32)
    (local $letter i32) (local $unit i32) (local $afterHigh i32) (local $asciiJson i32)
    (local $raw i32) (local $escBytes i32) (local $escUnits i32) (local $escJson i32)
    (local $escUtf8 i32) (local $loneCount i32) (local $isCanonical i32)
    ;; Counted in locals, stored once at the end: an exported global is read and written
    ;; through memory.
    (local.set $isCanonical (i32.const 1))
    (local.set $afterHigh (i32.const -1))
    (local.set $i (i32.add (local.get $start) (i32.const 1)))
    (block $closed
      (loop $next
        ;; Raw characters, 16 bytes at a time, up to the first that stops the run: a quote, a
        ;; backslash, a control, or the limit.
        (block $stopped
          (loop $run
            (local.set $v (v128.load (local.get $i)))
            (local.set $stops (i32.or
              (i8x16.bitmask (v128.or
                (v128.or
                  (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))
                  (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c))))
                (i8x16.lt_u (local.get $v) (i8x16.splat (i32.const 0x20)))))
              (call $pastLimit (local.get $i) (local.get $limit))))
            ;; 32 when no byte stops: all 16 are raw.
            (local.set $n (i32.ctz (local.get $stops)))
            (local.set $before (select
              (i32.const 0xffff)
              (i32.sub (i32.shl (i32.const 1) (local.get $n)) (i32.const 1))
              (i32.ge_u (local.get $n) (i32.const 16))))
            ;; UTF-16 units of the raw bytes before the stop: one per byte that is not a
            ;; continuation byte, one more per lead of a 4-byte character (a surrogate pair).
            (local.set $raw (i32.add (local.get $raw) (i32.add
              (i32.sub
                (i32.popcnt (local.get $before))
                (i32.popcnt (i32.and (local.get $before) (i8x16.bitmask (i8x16.eq
                  (v128.and (local.get $v) (i8x16.splat (i32.const 0xc0)))
                  (i8x16.splat (i32.const 0x80)))))))
              (i32.popcnt (i32.and (local.get $before) (i8x16.bitmask (i8x16.ge_u (local.get $v) (i8x16.splat (i32.const 0xf0)))))))))
            (if (i32.ge_u (local.get $n) (i32.const 16))
              (then
                (local.set $i (i32.add (local.get $i) (i32.const 16)))
                (br $run)))
            (local.set $i (i32.add (local.get $i) (local.get $n)))))
        (if (i32.ge_s (local.get $i) (local.get $limit)) (then (return (i32.const -1))))
        (br_if $closed (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x22)))
        ;; A raw control, or an escape cut by the limit.
        (if (i32.or
              (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x5c))
              (i32.ge_s (i32.add (local.get $i) (i32.const 1)) (local.get $limit)))
          (then (return (i32.const -1))))
        (local.set $letter (i32.load8_u offset=1 (local.get $i)))
        (if (i32.ne (local.get $letter) (i32.const 0x75))
          (then
            ;; A two-character escape: one unit, one UTF-8 byte, and the JSON characters
            ;; JSON.stringify writes for that unit (one for "/", which it writes raw).
            (local.set $unit (i32.load8_u offset=384 (local.get $letter)))
            (if (i32.eq (local.get $unit) (i32.const 0xff)) (then (return (i32.const -1))))
            (local.set $escBytes (i32.add (local.get $escBytes) (i32.const 2)))
            (local.set $escUnits (i32.add (local.get $escUnits) (i32.const 1)))
            (local.set $escUtf8 (i32.add (local.get $escUtf8) (i32.const 1)))
            (local.set $escJson (i32.add (local.get $escJson) (i32.load8_u offset=256 (local.get $unit))))
            (if (i32.eq (local.get $unit) (i32.const 0x2f)) (then (local.set $isCanonical (i32.const 0))))
            (local.set $i (i32.add (local.get $i) (i32.const 2)))
            (br $next)))
        ;; \uXXXX
        (if (i32.gt_s (i32.add (local.get $i) (i32.const 6)) (local.get $limit)) (then (return (i32.const -1))))
        (local.set $unit (call $hex4 (i32.add (local.get $i) (i32.const 2))))
        (if (i32.lt_s (local.get $unit) (i32.const 0)) (then (return (i32.const -1))))
        (local.set $escBytes (i32.add (local.get $escBytes) (i32.const 6)))
        (local.set $escUnits (i32.add (local.get $escUnits) (i32.const 1)))
        (if (i32.and
              (i32.eq (i32.and (local.get $unit) (i32.const 0xfc00)) (i32.const 0xdc00))
              (i32.eq (local.get $afterHigh) (local.get $i)))
          (then
            ;; A low surrogate right after a high one: the high one was counted as lone (6 JSON
            ;; characters, 3 bytes); the pair is 2 characters and 4 bytes in all.
            (local.set $loneCount (i32.sub (local.get $loneCount) (i32.const 1)))
            (local.set $escJson (i32.sub (local.get $escJson) (i32.const 4)))
            (local.set $escUtf8 (i32.add (local.get $escUtf8) (i32.const 1)))
            (local.set $isCanonical (i32.const 0)))
          (else (if (i32.eq (i32.and (local.get $unit) (i32.const 0xf800)) (i32.const 0xd800))
            (then
              (local.set $loneCount (i32.add (local.get $loneCount) (i32.const 1)))
              (local.set $escJson (i32.add (local.get $escJson) (i32.const 6)))
              (local.set $escUtf8 (i32.add (local.get $escUtf8) (i32.const 3)))
              (if (i32.eqz (call $lowercaseHex (i32.add (local.get $i) (i32.const 2))))
                (then (local.set $isCanonical (i32.const 0))))
              (if (i32.lt_u (local.get $unit) (i32.const 0xdc00))
                (then (local.set $afterHigh (i32.add (local.get $i) (i32.const 6))))))
            (else
              (if (i32.lt_u (local.get $unit) (i32.const 0x80))
                (then
                  (local.set $asciiJson (i32.load8_u offset=256 (local.get $unit)))
                  (local.set $escJson (i32.add (local.get $escJson) (local.get $asciiJson)))
                  ;; JSON.stringify spells only the controls without a short escape as \u00xx.
                  (if (i32.or
                        (i32.ne (local.get $asciiJson) (i32.const 6))
                        (i32.eqz (call $lowercaseHex (i32.add (local.get $i) (i32.const 2)))))
                    (then (local.set $isCanonical (i32.const 0)))))
                (else
                  (local.set $escJson (i32.add (local.get $escJson) (i32.const 1)))
                  (local.set $isCanonical (i32.const 0))))
              (local.set $escUtf8 (i32.add (local.get $escUtf8) (select
                (i32.const 1)
                (select (i32.const 2) (i32.const 3) (i32.lt_u (local.get $unit) (i32.const 0x800)))
                (i32.lt_u (local.get $unit) (i32.const 0x80)))))))))
        (local.set $i (i32.add (local.get $i) (i32.const 6)))
        (br $next)))
    (global.set $rawUnits (local.get $raw))
    (global.set $escapedBytes (local.get $escBytes))
    (global.set $escapedUnits (local.get $escUnits))
    (global.set $escapedJson (local.get $escJson))
    (global.set $escapedUtf8 (local.get $escUtf8))
    (global.set $lone (local.get $loneCount))
    (global.set $canonical (local.get $isCanonical))
    (i32.add (local.get $i) (i32.const 1)))

  ;; Writes code point $point (not a surrogate) as UTF-8 at $at; returns the offset after it.
  (func $putCodePoint (param $at i32) (param $point i32) (result i32)
    (if (i32.lt_u (local.get $point) (i32.const 0x80))
      (then
        (i32.store8 (local.get $at) (local.get $point))
        (return (i32.add (local.get $at) (i32.const 1)))))
    (if (i32.lt_u (local.get $point) (i32.const 0x800))
      (then
        (i32.store8 (local.get $at) (i32.or (i32.const 0xc0) (i32.shr_u (local.get $point) (i32.const 6))))
        (i32.store8 offset=1 (local.get $at) (i32.or (i32.const 0x80) (i32.and (local.get $point) (i32.const 0x3f))))
        (return (i32.add (local.get $at) (i32.const 2)))))
    (if (i32.lt_u (local.get $point) (i32.const 0x10000))
      (then
        (i32.store8 (local.get $at) (i32.or (i32.const 0xe0) (i32.shr_u (local.get $point) (i32.const 12))))
        (i32.store8 offset=1 (local.get $at) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $point) (i32.const 6)) (i32.const 0x3f))))
        (i32.store8 offset=2 (local.get $at) (i32.or (i32.const 0x80) (i32.and (local.get $point) (i32.const 0x3f))))
        (return (i32.add (local.get $at) (i32.const 3)))))
    (i32.store8 (local.get $at) (i32.or (i32.const 0xf0) (i32.shr_u (local.get $point) (i32.const 18))))
    (i32.store8 offset=1 (local.get $at) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $point) (i32.const 12)) (i32.const 0x3f))))
    (i32.store8 offset=2 (local.get $at) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $point) (i32.const 6)) (i32.const 0x3f))))
    (i32.store8 offset=3 (local.get $at) (i32.or (i32.const 0x80) (i32.and (local.get $point) (i32.const 0x3f))))
    (i32.add (local.get $at) (i32.const 4)))

  ;; Writes the UTF-8 of the literal body [$in, $in + $n) (no quotes) at $out, and at $lineFeedsAt
  ;; (as i32) the offset from $out of every line feed written right after a byte the hash cuts.
  ;; Returns the bytes written, or -1 (an invalid escape), -2 (an invalid \u escape), -3 (a lone
  ;; surrogate), with $errorAt the escape's offset in the body. $out must not lie inside the body.
  (func (export "unescape") (param $in i32) (param $n i32) (param $out i32) (param $lineFeedsAt i32) (result i32)
    (local $r i32) (local $w i32) (local $end i32) (local $v v128) (local $k i32)
    (local $letter i32) (local $unit i32) (local $low i32) (local $feeds i32)
    (local.set $r (local.get $in))
    (local.set $w (local.get $out))
    (local.set $end (i32.add (local.get $in) (local.get $n)))
    (block $finished
      (loop $next
        ;; Raw bytes, 16 at a time (stored whole: what follows the run is overwritten next), up
        ;; to the next backslash or the end.
        (block $stopped
          (loop $run
            (local.set $v (v128.load (local.get $r)))
            (v128.store (local.get $w) (local.get $v))
            (local.set $k (i32.ctz (i32.or
              (i8x16.bitmask (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c))))
              (call $pastLimit (local.get $r) (local.get $end)))))
            (if (i32.ge_u (local.get $k) (i32.const 16))
              (then
                (local.set $r (i32.add (local.get $r) (i32.const 16)))
                (local.set $w (i32.add (local.get $w) (i32.const 16)))
                (br $run)))
            (local.set $r (i32.add (local.get $r) (local.get $k)))
            (local.set $w (i32.add (local.get $w) (local.get $k)))))
        (br_if $finished (i32.ge_u (local.get $r) (local.get $end)))
        ;; A backslash that ends the body escapes nothing: invalid, as the letter 0 is.
        (local.set $letter (select
          (i32.load8_u offset=1 (local.get $r))
          (i32.const 0)
          (i32.lt_u (i32.add (local.get $r) (i32.const 1)) (local.get $end))))
        (local.set $unit (i32.load8_u offset=384 (local.get $letter)))
        (if (i32.ne (local.get $unit) (i32.const 0xff))
          (then (local.set $r (i32.add (local.get $r) (i32.const 2))))
          (else
            (global.set $errorAt (i32.sub (local.get $r) (local.get $in)))
            (if (i32.ne (local.get $letter) (i32.const 0x75)) (then (return (i32.const -1))))
            (local.set $unit (select
              (call $hex4 (i32.add (local.get $r) (i32.const 2)))
              (i32.const -1)
              (i32.le_u (i32.add (local.get $r) (i32.const 6)) (local.get $end))))
            (if (i32.lt_s (local.get $unit) (i32.const 0)) (then (return (i32.const -2))))
            (if (i32.eq (i32.and (local.get $unit) (i32.const 0xf800)) (i32.const 0xd800))
              (then
                ;; Only a high surrogate followed by a \u low one makes a character.
                (local.set $low (i32.const -1))
                (if (i32.and
                      (i32.lt_u (local.get $unit) (i32.const 0xdc00))
                      (i32.and
                        (i32.le_u (i32.add (local.get $r) (i32.const 12)) (local.get $end))
                        (i32.and
                          (i32.eq (i32.load8_u offset=6 (local.get $r)) (i32.const 0x5c))
                          (i32.eq (i32.load8_u offset=7 (local.get $r)) (i32.const 0x75)))))
                  (then (local.set $low (call $hex4 (i32.add (local.get $r) (i32.const 8))))))
                (if (i32.ne (i32.and (local.get $low) (i32.const -1024)) (i32.const 0xdc00))
                  (then (return (i32.const -3))))
                (local.set $unit (i32.add (i32.const 0x10000) (i32.or
                  (i32.shl (i32.sub (local.get $unit) (i32.const 0xd800)) (i32.const 10))
                  (i32.sub (local.get $low) (i32.const 0xdc00)))))
                (local.set $r (i32.add (local.get $r) (i32.const 6)))))
            (local.set $r (i32.add (local.get $r) (i32.const 6)))))
        ;; A line feed about to be written after a byte the hash cuts before it is noted.
        (if (i32.and (i32.eq (local.get $unit) (i32.const 0x0a)) (i32.gt_u (local.get $w) (local.get $out)))
          (then (if (i32.load8_u offset=640 (i32.load8_u (i32.sub (local.get $w) (i32.const 1))))
            (then
              (i32.store (i32.add (local.get $lineFeedsAt) (i32.shl (local.get $feeds) (i32.const 2)))
                (i32.sub (local.get $w) (local.get $out)))
              (local.set $feeds (i32.add (local.get $feeds) (i32.const 1)))))))
        (local.set $w (call $putCodePoint (local.get $w) (local.get $unit)))
        (br $next)))
    (global.set $lineFeeds (local.get $feeds))
    (i32.sub (local.get $w) (local.get $out)))
)
