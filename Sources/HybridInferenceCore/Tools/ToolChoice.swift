/// Whether the model may, must or must not call the session's tools on one
/// request: Gemini's `toolConfig.functionCallingConfig` (`AUTO`, `ANY`,
/// `NONE`, `allowedFunctionNames`), which the device follows with grammars.
///
/// Set it per request in `HybridGenerationOptions.toolChoice`. It applies to
/// the first round of the request; once the tools have answered, the model
/// is free to answer in text (`.auto`), or the loop would never end.
public struct ToolChoice: Sendable, Hashable {
  /// How calls are allowed.
  public enum Mode: String, Sendable, Hashable {
    /// The model decides whether to call a tool or answer in text (`AUTO`).
    case auto
    /// The model must call a tool (`ANY`); on device the call is forced from the first token.
    case required
    /// The model must answer in text (`NONE`); the tools are not offered.
    case none
  }

  /// How calls are allowed.
  public var mode: Mode
  /// With `.required`: the tools the model may pick from; nil for any.
  public var allowedToolNames: [String]?

  /// A choice by mode, optionally narrowed to some tools.
  public init(mode: Mode, allowedToolNames: [String]? = nil) {
    self.mode = mode
    self.allowedToolNames = allowedToolNames
  }

  /// The model decides (the default).
  public static let auto = ToolChoice(mode: .auto)
  /// The model must call one of the tools.
  public static let required = ToolChoice(mode: .required)
  /// The model must not call tools.
  public static let none = ToolChoice(mode: .none)

  /// The model must call one of the tools named.
  public static func named(_ names: String...) -> ToolChoice {
    ToolChoice(mode: .required, allowedToolNames: names)
  }

  /// The declarations of `tools` the model may call under this choice.
  func offered(_ tools: [ToolDeclaration]) -> [ToolDeclaration] {
    guard mode != .none else { return [] }
    guard let allowedToolNames else { return tools }
    return tools.filter { allowedToolNames.contains($0.name) }
  }
}
