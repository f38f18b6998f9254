import HybridInferenceCore
import HybridInferenceJinja

/// The hyper-parameters every architecture shares, against the asserts of
/// `llama_model_base::load_hparams` (src/llama-model.cpp) in the pinned llama.cpp.
///
/// Each of these ends the process with SIGABRT inside `llama_model_load_from_file`
/// when it does not hold (a `GGML_ASSERT`, not an exception that llama.cpp would
/// turn into a NULL model). The few checks here that llama.cpp reports as an
/// exception (missing keys, array lengths) are repeated so that the reason is
/// exact and the file never reaches the loader.
enum GGUFHyperparameterCheck {
  /// `LLAMA_MAX_LAYERS` and `LLAMA_MAX_EXPERTS` (src/llama-hparams.h).
  static let maximumLayers = 512
  static let maximumExperts = 1024
  /// What `llama_rope_scaling_type_from_string` knows; anything else is asserted on.
  static let ropeScalingTypes: Set<String> = ["none", "linear", "yarn", "longrope"]

  static func validate(_ parameters: GGUFHyperparameters) throws(GGUFProblem) {
    let layers = try layerCount(parameters)
    try checkExperts(parameters, layers: layers)
    if let scaling = parameters.file.metadata[parameters.key("rope.scaling.type")] {
      guard let name = scaling.string, ropeScalingTypes.contains(name) else {
        throw GGUFProblem(
          reason: "\(parameters.key("rope.scaling.type")) is '\(scaling.string ?? "not text")', "
            + "not one of none, linear, yarn, longrope")
      }
    }
    // A trained context of 0 leaves no window to answer in.
    guard try parameters.requiredCount("context_length") > 0 else {
      throw GGUFProblem(reason: "\(parameters.key("context_length")) is 0")
    }
    guard try parameters.requiredCount("embedding_length") > 0 else {
      throw GGUFProblem(reason: "\(parameters.key("embedding_length")) is 0")
    }
    _ = try parameters.perLayer("feed_forward_length", layers: layers)
    let heads = try parameters.perLayer("attention.head_count", layers: layers)
    let kvHeads = try parameters.perLayer("attention.head_count_kv", layers: layers) ?? heads
    // Grouped-query attention shares each key/value head among a whole number of
    // query heads; otherwise ggml_mul_mat asserts when the first context is made.
    if let heads, let kvHeads {
      for (layer, (query, kv)) in zip(heads, kvHeads).enumerated() where query > 0 && kv > 0 {
        guard query % kv == 0 else {
          throw GGUFProblem(
            reason: "layer \(layer) has \(query) attention heads and \(kv) key/value heads: "
              + "\(query) is not a multiple of \(kv)")
        }
      }
    }
  }

  private static func layerCount(_ parameters: GGUFHyperparameters) throws(GGUFProblem) -> Int {
    let layers = try parameters.requiredCount("block_count")
    guard (1...maximumLayers).contains(layers) else {
      throw GGUFProblem(
        reason: "\(parameters.key("block_count")) is \(layers); llama.cpp needs 1 to \(maximumLayers) layers")
    }
    if let nextN = try parameters.count("nextn_predict_layers"), nextN > layers {
      throw GGUFProblem(
        reason: "\(parameters.key("nextn_predict_layers")) is \(nextN), more than the \(layers) layers")
    }
    if parameters.architecture == "wavtokenizer-dec" {
      for name in ["posnet.block_count", "convnext.block_count"] {
        if let count = try parameters.count(name), count > layers {
          throw GGUFProblem(reason: "\(parameters.key(name)) is \(count), more than the \(layers) layers")
        }
      }
    }
    return layers
  }

  /// The mixture-of-experts counts must agree: no expert used that does not
  /// exist, at least one used when there are any, groups that divide them.
  private static func checkExperts(_ parameters: GGUFHyperparameters, layers: Int) throws(GGUFProblem) {
    var experts = try parameters.count("expert_count") ?? 0
    var used = try parameters.perLayer("expert_used_count", layers: layers)?.max() ?? 0
    let groups = try parameters.count("expert_group_count") ?? 0
    let groupsUsed = try parameters.count("expert_group_used_count") ?? 0
    if ["hunyuan-dense", "hunyuan_vl"].contains(parameters.architecture), experts <= 1 {
      (experts, used) = (0, 0)  // llama.cpp resets these for the dense Hunyuan models
    }
    let expertKey = parameters.key("expert_count")
    let usedKey = parameters.key("expert_used_count")
    let groupKey = parameters.key("expert_group_count")
    guard experts <= maximumExperts else {
      throw GGUFProblem(reason: "\(expertKey) is \(experts); llama.cpp allows at most \(maximumExperts)")
    }
    guard used <= experts else {
      throw GGUFProblem(reason: "\(usedKey) is \(used) but \(expertKey) is \(experts): more experts used than exist")
    }
    if experts > 0 {
      guard used > 0 else { throw GGUFProblem(reason: "\(expertKey) is \(experts) but no expert is used") }
      guard groups < experts else {
        throw GGUFProblem(reason: "\(groupKey) is \(groups), not fewer than the \(experts) experts")
      }
      if groups > 1 {
        guard experts % groups == 0, groupsUsed > 0, groupsUsed < groups else {
          throw GGUFProblem(
            reason: "\(experts) experts in \(groups) groups with \(groupsUsed) used: "
              + "the groups must divide the experts and between 1 and \(groups - 1) be used")
        }
      }
    } else if groups != 0 {
      throw GGUFProblem(reason: "\(groupKey) is \(groups) but the model has no experts")
    }
  }
}
