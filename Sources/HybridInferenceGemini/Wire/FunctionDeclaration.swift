import HybridInferenceCore
import HybridInferenceRemote

/// The tool half of a Gemini request: REST `tools[].functionDeclarations`
/// and `toolConfig.functionCallingConfig`.
struct GeminiTool: Sendable, Hashable, Encodable {
  /// The functions the model may call.
  var functionDeclarations: [FunctionDeclaration]

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
