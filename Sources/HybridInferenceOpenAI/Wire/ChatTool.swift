import HybridInferenceCore
import HybridInferenceRemote

/// A tool offered to the server: `{"type": "function", "function": {name,
/// description, parameters}}`, the parameters being the tool's JSON Schema.
struct ChatTool: Sendable, Hashable, Encodable {
  var type = "function"
  var function: Function

  struct Function: Sendable, Hashable, Encodable {
    var name: String
    var description: String
    var parameters: GenerationSchema
  }

  init(_ declaration: ToolDeclaration) {
    function = Function(
      name: declaration.name, description: declaration.description, parameters: declaration.parameters)
  }
}

/// `tool_choice`: `"required"`, or one named function. `.auto` is the
/// protocol's default and `.none` offers no tools at all, so neither is sent.
enum ChatToolChoice: Sendable, Hashable, Encodable {
  case required
  case function(String)

  init?(_ choice: ToolChoice) {
    guard choice.mode == .required else { return nil }
    if let names = choice.allowedToolNames, names.count == 1, let name = names.first {
      self = .function(name)
    } else {
      self = .required  // several allowed names: only those are offered
    }
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .required: try container.encode("required")
    case .function(let name): try container.encode(Named(function: .init(name: name)))
    }
  }

  /// `{"type": "function", "function": {"name": ...}}`.
  private struct Named: Encodable {
    var type = "function"
    var function: Name
    struct Name: Encodable { var name: String }
  }
}

/// A call the assistant made, as the protocol carries it: the arguments are
/// a JSON object written as a string.
struct ChatToolCall: Sendable, Hashable, Encodable {
  var id: String
  var type = "function"
  var function: Function

  struct Function: Sendable, Hashable, Encodable {
    var name: String
    var arguments: String
  }

  init(id: String, call: Part.FunctionCall) {
    self.id = id
    function = Function(name: call.name, arguments: call.argumentsJSON)
  }
}
