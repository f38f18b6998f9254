import HybridInferenceCore

/// What `GPUOffload` comes to for one model file on this machine's devices:
/// the GPU, how many layers go there, and the bytes they take on it.
///
/// Decided from facts passed in (`Facts`), so that the rule is tested on
/// machines this one is not: a GPU too small for anything, one just large
/// enough, two GPUs, none.
///
/// The rule follows llama.cpp's own fitting (`common/fit.cpp`, behind
/// `--fit`): layers are given to the GPU from the last (the output layer
/// first, then the blocks back to front) while the GPU's free memory, less
/// a margin of 1 GiB (llama.cpp's default target), still holds them with
/// their share of the KV cache and the compute buffer. Unlike llama.cpp,
/// which measures with a dry-run load, the sizes here are read from the
/// file's tensor table (`GGUFTensorBytes`) and its hyper-parameters, so that
/// the decision costs nothing before the load.
struct OffloadPlan: Equatable, Sendable {
  /// Where llama.cpp is asked to put the layers.
  enum Placement: Hashable, Sendable {
    /// No device in the registry holds layers: llama.cpp's defaults,
    /// which are the CPU, are left as they are.
    case unchanged
    /// Everything on the CPU, a GPU in the registry notwithstanding.
    case cpu
    /// `layers` layers, the last ones, on the GPU the registry calls `device`.
    case gpu(device: String, layers: Int)
  }

  var placement: Placement
  /// The model's layers as llama.cpp counts them: its blocks and the output layer.
  var totalLayers: Int
  /// The offloaded layers' weights, on the GPU rather than in this process.
  var deviceWeightBytes = 0
  /// The offloaded layers' KV cache, on the GPU rather than in this process.
  var deviceContextBytes = 0
  /// llama.cpp's compute buffer on the GPU (an estimate).
  var computeBytes = 0
  /// Whether all of it fits the GPU's free memory; a forced `.layers(n)`
  /// may not, and then loads on the CPU (`LlamaModel.load`).
  var fitsDevice = false
  /// Why, for the log.
  var reason: String

  /// Layers on the GPU.
  var layers: Int {
    if case .gpu(_, let layers) = placement { return layers }
    return 0
  }

  /// The GPU's name; nil when nothing goes to one.
  var deviceName: String? {
    if case .gpu(let device, _) = placement { return device }
    return nil
  }

  /// Everything this plan puts on the GPU.
  var deviceBytes: Int { Self.sum([deviceWeightBytes, deviceContextBytes, computeBytes]) }

  /// Memory llama.cpp's `--fit` leaves free on each device by default.
  static let margin = 1 << 30

  /// What the decision reads about the model and the machine.
  struct Facts: Equatable, Sendable {
    /// The devices in ggml's registry, with their free memory.
    var devices: [ComputeDevice]
    /// The bytes of each block's weights, block 0 first.
    var blockBytes: [Int]
    /// The output layer's weights (the final norm and the projection to the
    /// vocabulary, the token embeddings' when the file ties the two).
    var outputBytes: Int
    /// The KV cache of the whole context, every layer and sequence.
    var contextBytes: Int
    /// llama.cpp's compute buffer on the device (`computeEstimate`).
    var computeBytes: Int

    /// The layers as llama.cpp counts them.
    var totalLayers: Int { blockBytes.count + 1 }

    /// The bytes on a GPU of the last `count` layers (the output layer,
    /// then the blocks from the last), each block with its share of the KV
    /// cache; the weights and the cache apart.
    func lastLayers(_ count: Int) -> (weights: Int, context: Int) {
      let count = min(max(0, count), totalLayers)
      guard count > 0 else { return (0, 0) }
      let blocks = blockBytes.suffix(count - 1)
      let perBlock = blockBytes.isEmpty ? 0 : contextBytes / blockBytes.count
      return (OffloadPlan.sum([outputBytes] + blocks), OffloadPlan.product([perBlock, blocks.count]))
    }
  }

  /// The GPU `.automatic` and `.layers` use: a discrete one if the registry
  /// has one, else an integrated one (llama.cpp prefers them in that order),
  /// the one with the most free memory among them. A device that reports no
  /// free memory is never chosen, as llama.cpp's `--fit` leaves one that
  /// reports none unused. Ties go to the first listed, as llama.cpp numbers
  /// its devices.
  static func chosenDevice(among devices: [ComputeDevice]) -> ComputeDevice? {
    let usable = devices.filter { $0.kind.holdsLayers && ($0.freeMemoryBytes ?? 0) > 0 }
    let discrete = usable.filter { $0.kind == .gpu }
    let candidates = discrete.isEmpty ? usable : discrete
    return candidates.reduce(nil) { best, device in
      guard let best else { return device }
      return (device.freeMemoryBytes ?? 0) > (best.freeMemoryBytes ?? 0) ? device : best
    }
  }

  /// The plan for `offload` (validated: a negative layer count counts as none).
  static func decide(_ offload: GPUOffload, facts: Facts) -> OffloadPlan {
    let total = facts.totalLayers
    guard facts.devices.contains(where: { $0.kind.holdsLayers }) else {
      return OffloadPlan(placement: .unchanged, totalLayers: total, reason: "no GPU in llama.cpp's devices")
    }
    guard case .layers(let asked) = offload.request else {
      return automatic(facts: facts)
    }
    let count = min(max(0, asked), total)
    guard count > 0 else { return OffloadPlan(placement: .cpu, totalLayers: total, reason: "no GPU (asked for)") }
    guard let device = chosenDevice(among: facts.devices) else {
      return OffloadPlan(placement: .cpu, totalLayers: total, reason: "no GPU reports its memory")
    }
    return planned(count, on: device, facts: facts, reason: "\(count) of \(total) layers asked for")
  }

  /// `.automatic`: the most layers, from the last, that fit the chosen GPU.
  private static func automatic(facts: Facts) -> OffloadPlan {
    let total = facts.totalLayers
    guard let device = chosenDevice(among: facts.devices), let free = device.freeMemoryBytes else {
      return OffloadPlan(placement: .cpu, totalLayers: total, reason: "no GPU reports its memory")
    }
    let afterMargin = free - margin
    let budget = facts.computeBytes > afterMargin ? -1 : afterMargin - facts.computeBytes
    // The memory taken grows with each layer added: the most that fit is
    // found by bisection over 0...total, at most log2(total) sums.
    var fitting = 0
    var tooMany = total + 1
    while tooMany - fitting > 1 {
      let middle = fitting + (tooMany - fitting) / 2
      let bytes = facts.lastLayers(middle)
      if sum([bytes.weights, bytes.context]) <= budget { fitting = middle } else { tooMany = middle }
    }
    let mib = free >> 20
    guard fitting > 0 else {
      return OffloadPlan(
        placement: .cpu, totalLayers: total,
        reason: "no layer fits \(device.name)'s \(mib) MiB free beside a 1 GiB margin and the compute buffer")
    }
    let reason = fitting == total ? "every layer fits" : "\(fitting) of \(total) layers fit"
    return planned(fitting, on: device, facts: facts, reason: "\(reason) \(device.name)'s \(mib) MiB free")
  }

  private static func planned(_ count: Int, on device: ComputeDevice, facts: Facts, reason: String) -> OffloadPlan {
    let bytes = facts.lastLayers(count)
    var plan = OffloadPlan(
      placement: .gpu(device: device.name, layers: count), totalLayers: facts.totalLayers,
      deviceWeightBytes: bytes.weights, deviceContextBytes: bytes.context, computeBytes: facts.computeBytes,
      reason: reason)
    plan.fitsDevice = plan.deviceBytes <= device.freeMemoryBytes ?? 0
    return plan
  }

  /// An estimate of llama.cpp's compute buffer for a batch of `batch`
  /// tokens over a window of `window`: the batch's logits over the
  /// vocabulary, its attention scores over the window (every head), and a
  /// few activations the width of the embedding, all `f32`.
  static func computeEstimate(batch: Int, window: Int, vocabulary: Int, heads: Int, embedding: Int) -> Int {
    let scores = product([heads, window])
    let perToken = sum([vocabulary, scores, product([embedding, 4])])
    return product([4, batch, perToken])
  }

  /// The sum, `Int.max` when it does not fit an `Int`.
  static func sum(_ values: [Int]) -> Int {
    var total = 0
    for value in values {
      let (next, overflow) = total.addingReportingOverflow(max(0, value))
      if overflow { return Int.max }
      total = next
    }
    return total
  }

  /// The product, `Int.max` when it does not fit an `Int`.
  static func product(_ values: [Int]) -> Int {
    var total = 1
    for value in values {
      let (next, overflow) = total.multipliedReportingOverflow(by: max(0, value))
      if overflow { return Int.max }
      total = next
    }
    return total
  }
}
