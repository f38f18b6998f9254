import HybridInferenceCore
import HybridInferenceRemote

/// The tool half of a Gemini request: REST `tools[]` (function
/// declarations, or one of Google's server-side tools per entry) and
/// `toolConfig.functionCallingConfig`.
struct GeminiTool: Sendable, Hashable, Encodable {
  /// The functions the model may call.
  var functionDeclarations: [FunctionDeclaration]?
  /// Google Search grounding (`{"googleSearch": {}}`).
  var googleSearch: Options?
  /// Code execution (`{"codeExecution": {}}`).
  var codeExecution: Options?
  /// URL context (`{"urlContext": {}}`).
  var urlContext: Options?

  /// A server-side tool's options: none yet, an empty object on the wire.
  struct Options: Sendable, Hashable, Encodable {}

  init(functionDeclarations: [FunctionDeclaration]) {
    self.functionDeclarations = functionDeclarations
  }

  /// The entry declaring `tool`.
  init(_ tool: ServerTool) {
    switch tool.kind {
    case .googleSearch: googleSearch = Options()
    case .codeExecution: codeExecution = Options()
    case .urlContext: urlContext = Options()
    }
  }

  /// One function: its name, what it does, and its arguments' JSON Schema
  /// (`parametersJsonSchema`, the JSON Schema form, not the OpenAPI subset).
  struct FunctionDeclaration: Sendable, Hashable, Encodable {
    var name: String
    var description: String
    var parametersJsonSchema: GenerationSchema
  }
}

/// REST `ToolConfig`: how the model may call the declared functions.
struct GeminiToolConfig: Sendable, Hashable, Encodable {
  var functionCallingConfig: FunctionCallingConfig

  /// REST `FunctionCallingConfig`: `AUTO`, `ANY` (with the allowed names) or `NONE`.
  struct FunctionCallingConfig: Sendable, Hashable, Encodable {
    var mode: String
    var allowedFunctionNames: [String]?
  }

  /// The wire form of a choice; nil for `.auto`, Gemini's default.
  init?(_ choice: ToolChoice) {
    switch choice.mode {
    case .auto: return nil
    case .required:
      functionCallingConfig = FunctionCallingConfig(mode: "ANY", allowedFunctionNames: choice.allowedToolNames)
    case .none:
      functionCallingConfig = FunctionCallingConfig(mode: "NONE", allowedFunctionNames: nil)
    }
  }
}
