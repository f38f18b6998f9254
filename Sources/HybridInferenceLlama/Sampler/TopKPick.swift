import CLlama
import HybridInferenceCore

/// Random sampling behind a top-k sampler, given only the k candidates that
/// can survive it instead of the whole vocabulary.
///
/// Why: `llama_sampler_sample` copies every logit into a candidate array
/// (49,152 entries of 12 bytes for SmolLM2) and the chain's top-k then
/// partially sorts all of them, for about as long as llama.cpp's own greedy
/// sampler takes (`local-benchmark samplecost` measures it; `GreedyPick`).
/// The k largest logits, found 16 at a time in place, are all the chain's
/// top-k keeps.
///
/// The token is the one llama.cpp's chain would draw: when the k largest
/// are strictly ordered among themselves and strictly above every other
/// logit, top-k sorts the short array into exactly the array it makes of
/// the whole vocabulary, so the samplers after it and the random draw see
/// the same candidates in the same order. Where ties or NaNs could order
/// them differently (`std::partial_sort` is not stable), and past k = 128
/// (where llama.cpp sorts by buckets instead), the caller leaves the pick
/// to llama.cpp (nil).
package enum TopKPick {
  /// The largest k this reads: llama.cpp partially sorts up to 128.
  package static let largestCount = 128

  /// The indices of the `count` largest of `logits`, largest first; nil
  /// unless they are strictly ordered, strictly above the rest, and no
  /// logit is a NaN (or when `count` is not in 1...128, or not smaller than
  /// the logits).
  package static func indices(in logits: UnsafeBufferPointer<Float>, count: Int) -> [Int]? {
    guard count > 0, count <= largestCount, count < logits.count else { return nil }
    var heap = SmallestFirstHeap(logits[0..<count])
    // A block whose largest logit is not above the k-th largest so far is
    // passed over after 16 vector compares; only the few others are read
    // one by one. (NaNs are never the largest; `isUnique` refuses them.)
    let block = 256
    for start in stride(from: count, to: logits.count, by: block) {
      let range = start..<min(start + block, logits.count)
      guard GreedyPick.largest(of: logits, in: range) > heap.smallest else { continue }
      for index in range where logits[index] > heap.smallest { heap.replaceSmallest(logits[index], index: index) }
    }
    guard isUnique(threshold: heap.smallest, count: count, in: logits) else { return nil }
    let order = heap.entries.sorted { $0.value > $1.value }
    for (larger, smaller) in zip(order, order.dropFirst()) where !(larger.value > smaller.value) { return nil }
    return order.map(\.index)
  }

  /// True when exactly `count` logits are at least `threshold` and none is
  /// a NaN: no logit outside the chosen ties with the smallest chosen.
  private static func isUnique(threshold: Float, count: Int, in logits: UnsafeBufferPointer<Float>) -> Bool {
    guard let base = logits.baseAddress, !threshold.isNaN else { return false }
    let width = SIMD16<Float>.scalarCount
    let raw = UnsafeRawPointer(base)
    let limit = SIMD16<Float>(repeating: threshold)
    var atLeast = SIMD16<Int32>()
    var sawNaN = false
    var position = 0
    while position + width <= logits.count {
      let chunk = raw.loadUnaligned(fromByteOffset: position * MemoryLayout<Float>.stride, as: SIMD16<Float>.self)
      atLeast &+= SIMD16<Int32>().replacing(with: 1, where: chunk .>= limit)
      sawNaN = sawNaN || any(chunk .!= chunk)
      position += width
    }
    var total = Int(atLeast.wrappedSum())
    for value in logits[position...] {
      if value >= threshold { total += 1 }
      sawNaN = sawNaN || value.isNaN
    }
    return !sawNaN && total == count
  }

  /// Samples with `chain`, whose first sampler is a top-k of `count`, from
  /// `logits` (one step's, the whole vocabulary), as `llama_sampler_sample`
  /// would (and accepts the token); nil when the pick is left to it, with
  /// nothing drawn. `buffer` is the candidate array, kept by the caller so
  /// that no step allocates one.
  /// - Throws: when llama.cpp's chain selects no candidate (where
  ///   `llama_sampler_sample` would abort).
  package static func sample(
    chain: UnsafeMutablePointer<llama_sampler>, logits: UnsafeBufferPointer<Float>, count: Int,
    buffer: inout [llama_token_data]
  ) throws(HybridInferenceError) -> llama_token? {
    guard let chosen = indices(in: logits, count: count) else { return nil }
    buffer.removeAll(keepingCapacity: true)
    for token in chosen { buffer.append(llama_token_data(id: llama_token(token), logit: logits[token], p: 0)) }
    let token = buffer.withUnsafeMutableBufferPointer { candidates -> llama_token? in
      var array = llama_token_data_array(
        data: candidates.baseAddress, size: candidates.count, selected: -1, sorted: false)
      llama_sampler_apply(chain, &array)
      guard array.selected >= 0, array.selected < array.size else { return nil }
      return candidates[Int(array.selected)].id
    }
    guard let token else { throw .generationFailed("llama.cpp's sampler selected no token") }
    llama_sampler_accept(chain, token)
    return token
  }
}

/// The k largest values seen so far, smallest at the root, with where each
/// was found.
private struct SmallestFirstHeap {
  struct Entry {
    var value: Float
    var index: Int
  }

  private(set) var entries: [Entry]

  /// A heap of `values`, each found at its own index.
  init(_ values: Slice<UnsafeBufferPointer<Float>>) {
    entries = values.indices.map { Entry(value: values[$0], index: $0) }
    for parent in stride(from: entries.count / 2 - 1, through: 0, by: -1) { siftDown(from: parent) }
  }

  var smallest: Float { entries[0].value }

  mutating func replaceSmallest(_ value: Float, index: Int) {
    entries[0] = Entry(value: value, index: index)
    siftDown(from: 0)
  }

  private mutating func siftDown(from start: Int) {
    var parent = start
    while true {
      let left = 2 * parent + 1
      guard left < entries.count else { return }
      let right = left + 1
      let child = right < entries.count && entries[right].value < entries[left].value ? right : left
      guard entries[child].value < entries[parent].value else { return }
      entries.swapAt(parent, child)
      parent = child
    }
  }
}
