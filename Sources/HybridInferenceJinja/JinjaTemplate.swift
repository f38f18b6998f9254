import Foundation

/// A chat template parsed once, rendered any number of times.
///
/// Parsing is the expensive part; a loaded model keeps one of these so each
/// request only interprets the tree. Both halves are bounded: parsing by
/// nesting depth (`JinjaParser.maximumDepth`), each render by a
/// `JinjaBudget`.
package struct JinjaTemplate: Sendable {
  private let nodes: [JinjaNode]

  package init(_ source: String) throws(JinjaError) {
    nodes = try JinjaParser.parse(source)
  }

  /// The output for `variables`; `now` is what `strftime_now` reads. The
  /// budget's limits follow the size of the input (`JinjaBudget.Limits`);
  /// `cancellation` stops the render at its next step.
  package func render(_ variables: [String: JinjaValue], now: Date = Date(), cancellation: JinjaCancellation? = nil)
    throws(JinjaError) -> String
  {
    try render(variables, now: now, budget: JinjaBudget(JinjaBudget.Limits(for: variables), cancellation: cancellation))
  }

  /// The output for `variables` within `budget`, which keeps what was spent.
  func render(_ variables: [String: JinjaValue], now: Date = Date(), budget: JinjaBudget) throws(JinjaError)
    -> String
  {
    let interpreter = JinjaInterpreter(now: now, budget: budget)
    let globals = JinjaScope(parent: nil, variables: interpreter.globals())
    let scope = JinjaScope(parent: globals, variables: variables)
    var output = ""
    do throws(JinjaError) {
      _ = try interpreter.render(nodes, scope: scope, into: &output)
    } catch {
      try? budget.finish()
      throw error
    }
    try budget.finish()
    return output
  }
}

extension JinjaBudget.Limits {
  /// The default limits for a render of `variables`: sized by the text they
  /// hold and by how many messages and tools they list.
  init(for variables: [String: JinjaValue]) {
    var bytes = 0
    var pending = Array(variables.values)
    while let value = pending.popLast() {
      switch value {
      case .string(let text): bytes = bytes.addingClamped(text.utf8.count)
      case .array(let items):
        bytes = bytes.addingClamped(items.count)
        pending += items
      case .dict(let dict):
        bytes = bytes.addingClamped(dict.keys.count)
        pending += dict.pairs.map(\.1)
      default: break
      }
    }
    var items = 0
    for name in ["messages", "tools", "documents"] {
      if case .array(let list)? = variables[name] { items += list.count }
    }
    self.init(inputBytes: bytes, items: items)
  }
}
