import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Everything the command line says, after parsing and range checks.
///
/// A plain value: the parser produces it, the chat loop reads it, and
/// `generationOptions` maps it onto both models' settings.
public struct ChatOptions: Sendable, Hashable {
  /// The one-shot prompt from the arguments; nil means stdin or interactive.
  public var prompt: String?
  /// `--mode`; nil means the default for whether a cloud key is set.
  public var mode: InferenceMode?
  /// `--model`: the GGUF file, or where to download it; nil means the
  /// library's default model.
  public var model: ModelArgument?
  /// `--projector`: the on-device model's multimodal projector, which lets
  /// it read `--image` itself.
  public var projectorPath: String?
  /// `--gpu`: how many of the on-device model's layers go to a GPU.
  public var gpu = GPUOffload.automatic
  /// `--cloud-model`.
  public var cloudModel: String
  /// `--server`: the API root of an OpenAI-compatible server
  /// (`http://127.0.0.1:8080/v1`), which then takes the cloud model's place.
  public var server: String?
  /// `--server-model`: the model name sent to that server.
  public var serverModel: String?
  /// `--system`: instructions sent before every turn.
  public var systemInstructions: String?
  /// `--temperature`, >= 0.
  public var temperature: Double?
  /// `--top-p`, in (0, 1].
  public var topP: Double?
  /// `--top-k`, > 0.
  public var topK: Int?
  /// `--seed`, 0...Int32.max (the Gemini API's seed is an int32).
  public var seed: Int?
  /// `--max-tokens`, > 0.
  public var maxTokens: Int?
  /// `--thinking`: the cloud model's thinking level.
  public var thinking: ThinkingConfig.ThinkingLevel?
  /// `--reasoning`: how much the on-device model may think.
  public var reasoning: GenerationOptions.Reasoning?
  /// `--hide-thoughts`: show no thoughts, on the terminal or in `--json`.
  public var hideThoughts = false
  /// `--no-stream`: print the answer once it is complete.
  public var noStream: Bool
  /// `--json`: one JSON object per response on stdout.
  public var json: Bool
  /// `--tool NAME` (repeatable): built-in tools the model may call.
  public var tools: [BuiltInTool] = []
  /// `--image PATH` (repeatable): images sent, in order, with the first prompt.
  public var imagePaths: [String] = []
  /// `--vertex-project`: Gemini on Vertex AI in this Google Cloud project.
  public var vertexProject: String?
  /// `--vertex-location`: the Vertex AI region, or `global`.
  public var vertexLocation: String?

  /// Whether the Gemini model is on Vertex AI (either Vertex flag given).
  public var usesVertexAI: Bool { vertexProject != nil || vertexLocation != nil }
  /// `--fallback-on LIST`: what a hybrid mode falls back on beyond the default rule (`FallbackPolicy.default`).
  public var fallbackPolicy = FallbackPolicy.default
  /// `--hedge-after MS`: a hybrid mode asks its other model too when the first
  /// has delivered nothing within this many milliseconds.
  public var hedgeAfterMilliseconds: Int?
  /// `--continue-interrupted`: a hybrid mode continues an answer whose stream
  /// broke on the other model.
  public var continuesInterruptedAnswers = false

  /// The cloud model used when `--cloud-model` is not given.
  public static let defaultCloudModel = "gemini-3.1-flash-lite"

  /// The model name sent to a `--server` when `--server-model` is not given:
  /// llama-server answers with its one model whatever the name; vLLM and
  /// Ollama need the real one.
  public static let defaultServerModel = "default"

  /// Options with every setting at its default.
  public init(
    prompt: String? = nil, mode: InferenceMode? = nil, model: ModelArgument? = nil,
    cloudModel: String = ChatOptions.defaultCloudModel, systemInstructions: String? = nil,
    temperature: Double? = nil, topP: Double? = nil, topK: Int? = nil, seed: Int? = nil,
    maxTokens: Int? = nil, thinking: ThinkingConfig.ThinkingLevel? = nil, noStream: Bool = false,
    json: Bool = false, server: String? = nil, serverModel: String? = nil
  ) {
    self.server = server
    self.serverModel = serverModel
    self.prompt = prompt
    self.mode = mode
    self.model = model
    self.cloudModel = cloudModel
    self.systemInstructions = systemInstructions
    self.temperature = temperature
    self.topP = topP
    self.topK = topK
    self.seed = seed
    self.maxTokens = maxTokens
    self.thinking = thinking
    self.noStream = noStream
    self.json = json
  }
}
