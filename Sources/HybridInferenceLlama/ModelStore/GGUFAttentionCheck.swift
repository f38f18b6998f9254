import HybridInferenceCore
import HybridInferenceJinja

/// The attention geometry and tensor shapes of the dense decoder architectures
/// that share llama's layout, against their graph builders in the pinned
/// llama.cpp (src/models/<architecture>.cpp).
///
/// These files load: llama.cpp checks each tensor's shape against the
/// hyper-parameters, but the hyper-parameters among themselves only when it
/// builds the graph, inside the first `llama_init_from_model`, with asserts
/// (`GGML_ASSERT(n_embd_head == hparams.n_embd_head_k())`, `== n_rot`, and
/// ggml's own on a KV cache narrower than the keys). The shapes are repeated
/// here so that a mismatch names the tensor before the loader sees it.
///
/// Other architectures get the shared checks only (`GGUFHyperparameterCheck`):
/// each has its own graph with its own asserts, which this library does not
/// mirror (see the OnDeviceModel article, "Model file checks").
enum GGUFAttentionCheck {
  /// Architectures whose graph asserts equal key, value and rotary head sizes,
  /// and whose every layer has the same head counts.
  static let architectures: Set<String> = [
    "llama", "qwen2", "qwen3", "mistral3", "smollm3", "internlm2", "starcoder2", "exaone",
  ]

  static func validate(_ parameters: GGUFHyperparameters, vocabularySize: Int) throws(GGUFProblem) {
    let layers = try parameters.requiredCount("block_count")
    let embedding = try parameters.requiredCount("embedding_length")
    let headsKey = parameters.key("attention.head_count")
    let kvKey = parameters.key("attention.head_count_kv")
    guard let heads = try parameters.perLayer("attention.head_count", layers: layers) else {
      throw GGUFProblem(reason: "\(headsKey) is missing")
    }
    let kvHeads = try parameters.perLayer("attention.head_count_kv", layers: layers) ?? heads
    guard let head = heads.first, head > 0, heads.allSatisfy({ $0 == head }) else {
      throw GGUFProblem(reason: "\(headsKey) must be the same positive number for every layer (\(heads))")
    }
    guard let kvHead = kvHeads.first, kvHead > 0, kvHeads.allSatisfy({ $0 == kvHead }) else {
      throw GGUFProblem(reason: "\(kvKey) must be the same positive number for every layer (\(kvHeads))")
    }
    let keyLength = try parameters.count("attention.key_length") ?? embedding / head
    let valueLength = try parameters.count("attention.value_length") ?? embedding / head
    let rotary = try parameters.count("rope.dimension_count") ?? keyLength
    guard keyLength > 0, keyLength == valueLength else {
      throw GGUFProblem(
        reason: "attention key heads are \(keyLength) wide and value heads \(valueLength): "
          + "\(parameters.architecture) needs them equal")
    }
    guard rotary == keyLength else {
      throw GGUFProblem(
        reason: "\(parameters.key("rope.dimension_count")) is \(rotary) but attention heads are \(keyLength) wide")
    }
    // Counts are at most UInt32.max each: their products can overflow an Int.
    let (queryWidth, queryOverflow) = keyLength.multipliedReportingOverflow(by: head)
    let (keyWidth, keyOverflow) = keyLength.multipliedReportingOverflow(by: kvHead)
    let (valueWidth, valueOverflow) = valueLength.multipliedReportingOverflow(by: kvHead)
    guard !queryOverflow, !keyOverflow, !valueOverflow else {
      throw GGUFProblem(
        reason: "attention heads \(keyLength) wide times \(head) query or \(kvHead) key/value heads overflow")
    }
    var expected = ["output_norm.weight": [embedding]]
    if vocabularySize > 0 {  // a model without a vocabulary takes its size from elsewhere
      expected["token_embd.weight"] = [embedding, vocabularySize]
      expected["output.weight"] = [embedding, vocabularySize]
    }
    for layer in 0..<layers {
      let prefix = "blk.\(layer)."
      expected[prefix + "attn_norm.weight"] = [embedding]
      expected[prefix + "attn_q.weight"] = [embedding, queryWidth]
      expected[prefix + "attn_k.weight"] = [embedding, keyWidth]
      expected[prefix + "attn_v.weight"] = [embedding, valueWidth]
      expected[prefix + "attn_output.weight"] = [queryWidth, embedding]
    }
    for (name, shape) in parameters.file.tensorShapes.sorted(by: { $0.key < $1.key }) {
      if let want = expected[name], want != shape {
        throw GGUFProblem(reason: "tensor \(name) is \(shape) but the hyper-parameters make it \(want)")
      }
      if let layer = Self.layer(of: name), layer >= layers {
        throw GGUFProblem(reason: "tensor \(name) belongs to layer \(layer) of a \(layers)-layer model")
      }
    }
  }

  /// The layer number of a `blk.N.` tensor.
  private static func layer(of name: String) -> Int? {
    guard name.hasPrefix("blk.") else { return nil }
    return Int(name.dropFirst(4).prefix { $0 != "." })
  }
}
