/// Greedy sampling as llama.cpp's greedy sampler picks, read straight from
/// the logits.
///
/// Why: `llama_sampler_sample` first copies every logit into a candidate
/// array (49,152 entries of 12 bytes for SmolLM2) and then scans it, a
/// percent or two of a small model's shallow decode step (`local-benchmark
/// samplecost` measures it). Reading the logits in place, 16 at a time, takes
/// a small fraction of that.
///
/// The pick is the same token: llama.cpp's greedy apply keeps the first
/// logit strictly larger than the one selected, starting from token 0, so
/// it picks the first of the largest, and a NaN never wins (it compares
/// false), except at token 0, where llama.cpp keeps it. That one case is
/// left to llama.cpp (nil).
package enum GreedyPick {
  /// The index of the first largest of `logits`, ignoring NaNs; nil when
  /// `logits` is empty or starts with a NaN (llama.cpp picks token 0 then).
  package static func index(in logits: UnsafeBufferPointer<Float>) -> Int? {
    guard let first = logits.first, !first.isNaN else { return nil }
    return logits.firstIndex(of: largest(of: logits, in: logits.indices))
  }

  /// The largest of `logits[range]`, 16 at a time, ignoring NaNs; -infinity
  /// when the range holds nothing else. `TopKPick` reads a block's with it.
  static func largest(of logits: UnsafeBufferPointer<Float>, in range: Range<Int>) -> Float {
    guard let base = logits.baseAddress else { return -.infinity }
    let width = SIMD16<Float>.scalarCount
    let raw = UnsafeRawPointer(base)
    var lanes = SIMD16<Float>(repeating: -.infinity)
    var offset = range.lowerBound
    while offset + width <= range.upperBound {
      let chunk = raw.loadUnaligned(fromByteOffset: offset * MemoryLayout<Float>.stride, as: SIMD16<Float>.self)
      // Only a larger lane replaces: a NaN compares false and is skipped.
      lanes.replace(with: chunk, where: chunk .> lanes)
      offset += width
    }
    var largest = lanes.max()
    for value in logits[offset..<range.upperBound] where value > largest { largest = value }
    return largest
  }
}
