/// The variables visible at one point of a render: a loop body or a macro
/// call sees its own, then its parent's. Lives only for one render.
final class JinjaScope {
  private var variables: [String: JinjaValue]
  private let parent: JinjaScope?

  init(parent: JinjaScope?, variables: [String: JinjaValue] = [:]) {
    self.parent = parent
    self.variables = variables
  }

  func lookup(_ name: String) -> JinjaValue? {
    var scope: JinjaScope? = self
    while let current = scope {
      if let value = current.variables[name] { return value }
      scope = current.parent
    }
    return nil
  }

  func set(_ name: String, _ value: JinjaValue) {
    variables[name] = value
  }

  /// Drops every variable: the end of a render, where a macro stored here
  /// (whose closure holds this scope) would otherwise keep both alive.
  func clear() {
    variables = [:]
  }
}
