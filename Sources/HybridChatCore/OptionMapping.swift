import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

extension ChatOptions {
  /// The on-device model: `--model` (a path, else a file to download, else
  /// the library's default model) with `--projector` and `--gpu`. The store's directory and
  /// the hub's settings of a download come from the environment
  /// (HYBRID_INFERENCE_MODELS, HF_HUB_CACHE, HF_ENDPOINT, HF_TOKEN).
  public var localModel: LocalSystemModel {
    switch model {
    case .path(let path): LocalSystemModel(modelPath: path, projectorPath: projectorPath, gpu: gpu)
    case .source(let source, _): LocalSystemModel(source: source, store: .default, gpu: gpu)
    case nil:
      gpu == .automatic && projectorPath == nil
        ? .default
        : LocalSystemModel(modelPath: LocalSystemModel.default.modelPath, projectorPath: projectorPath, gpu: gpu)
    }
  }

  /// The sampling settings for both models, each in its own vocabulary.
  ///
  /// The cloud takes every flag as the REST field of the same meaning. The
  /// on-device model has one sampling mode, chosen in this order:
  /// - `--temperature 0`: greedy, the same answer every time;
  /// - `--top-k`: `.random(top:seed:)`;
  /// - `--top-p`: `.random(probabilityThreshold:seed:)` (with `--top-k` too,
  ///   top-k wins on device and top-p still reaches the cloud);
  /// - `--seed` alone: nucleus sampling at the library's default threshold
  ///   (0.95) with that seed, so the seed is never silently dropped;
  /// - nothing: the library's default.
  public var generationOptions: HybridGenerationOptions {
    .hybrid(gemini: generationConfig, foundationModels: onDeviceOptions)
  }

  /// The cloud half (`GenerationConfig`).
  public var generationConfig: GenerationConfig? {
    let config = GenerationConfig(
      temperature: temperature, topP: topP, topK: topK, maxOutputTokens: maxTokens, seed: seed,
      thinkingConfig: thinking.map { ThinkingConfig(thinkingLevel: $0) })
    return config == GenerationConfig() ? nil : config
  }

  /// The on-device half (`GenerationOptions`); `--reasoning` goes only
  /// here, as `--thinking` goes only to the cloud: each names its own
  /// model's levels.
  public var onDeviceOptions: GenerationOptions? {
    let options = GenerationOptions(
      sampling: onDeviceSampling, temperature: temperature, maximumResponseTokens: maxTokens,
      reasoning: reasoning)
    return options == GenerationOptions() ? nil : options
  }

  /// The threshold the library samples with by default (see `GenerationOptions`).
  static let defaultProbabilityThreshold = 0.95

  private var onDeviceSampling: GenerationOptions.SamplingMode? {
    let seed = seed.map { UInt64($0) }
    if temperature == 0 { return .greedy }
    if let topK { return .random(top: topK, seed: seed) }
    if let topP { return .random(probabilityThreshold: topP, seed: seed) }
    if let seed { return .random(probabilityThreshold: Self.defaultProbabilityThreshold, seed: seed) }
    return nil
  }
}
