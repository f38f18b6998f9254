import Foundation

/// Runs a parsed template against its variables, writing the output.
///
/// Semantics follow jinja2 in transformers' sandbox: loops and macros have
/// their own scope, `namespace()` is the only way to carry state out of a
/// loop, undefined values print as nothing but fail when dereferenced, and
/// methods that would mutate a value (`append`, `pop`) are refused. Every
/// statement, expression, loop iteration, call and byte is charged to
/// `budget` (`JinjaBudget`): a template is input, and may be hostile.
struct JinjaInterpreter {
  /// The clock `strftime_now` reads; fixed in tests.
  var now: Date
  /// What this render may still spend.
  let budget: JinjaBudget

  enum Flow {
    case normal, breakLoop, continueLoop
  }

  func render(_ nodes: [JinjaNode], scope: JinjaScope, into output: inout String) throws(JinjaError) -> Flow {
    try budget.enter(nodes.first?.line ?? 0)
    defer { budget.leave() }
    for node in nodes {
      let line = node.line
      try budget.step(line)
      switch node.statement {
      case .text(let text):
        try emit(text, into: &output, line)
      case .output(let expression):
        try emit(try evaluate(expression, scope, line).pythonString(budget), into: &output, line)
      case .conditional(let branches, let otherwise):
        var taken: [JinjaNode] = otherwise
        for (condition, body) in branches where try evaluate(condition, scope, line).truthy {
          taken = body
          break
        }
        let flow = try render(taken, scope: scope, into: &output)
        if flow != .normal { return flow }
      case .loop(let loop):
        try run(loop, scope: scope, line: line, into: &output)
      case .assign(let target, let value):
        try assign(target, try evaluate(value, scope, line), scope: scope, line: line)
      case .assignBlock(let name, let filters, let body):
        var captured = ""
        _ = try render(body, scope: scope, into: &captured)
        scope.set(name, try applyFilters(filters, to: .string(captured), scope, line))
      case .macro(let definition):
        budget.retain(scope)
        scope.set(definition.name, .callable(macro(definition, scope: scope)))
      case .callBlock(let call, let parameters, let body):
        let caller = macro(JinjaMacroDefinition(name: "caller", parameters: parameters, body: body), scope: scope)
        guard case .call(let callee, let written) = call else { break }
        var arguments = try evaluate(written, scope, line)
        arguments.keyword.append(("caller", .callable(caller)))
        try emit(
          try invoke(try evaluate(callee, scope, line), arguments, line).pythonString(budget), into: &output, line)
      case .filterBlock(let filters, let body):
        var captured = ""
        let flow = try render(body, scope: scope, into: &captured)
        try emit(
          try applyFilters(filters, to: .string(captured), scope, line).pythonString(budget), into: &output, line)
        if flow != .normal { return flow }
      case .breakLoop:
        return .breakLoop
      case .continueLoop:
        return .continueLoop
      }
    }
    return .normal
  }

  /// Appends `text` to an output (the render's, or a block's being captured).
  private func emit(_ text: String, into output: inout String, _ line: Int) throws(JinjaError) {
    try budget.check()
    try budget.write(text.utf8.count, line)
    output += text
  }

  func applyFilters(
    _ filters: [(String, JinjaCallArguments)], to value: JinjaValue, _ scope: JinjaScope, _ line: Int
  ) throws(JinjaError) -> JinjaValue {
    var result = value
    for (name, arguments) in filters {
      result = try JinjaFilters.apply(name, result, try evaluate(arguments, scope, line), line: line, self)
    }
    return result
  }

  private func run(_ loop: JinjaLoop, scope: JinjaScope, line: Int, into output: inout String) throws(JinjaError) {
    var items = try evaluate(loop.iterable, scope, line).iterated(line: line, budget)
    if let condition = loop.condition {
      var kept: [JinjaValue] = []
      for item in items {
        try budget.iterate(line)
        let probe = JinjaScope(parent: scope)
        try assign(loop.target, item, scope: probe, line: line)
        if try evaluate(condition, probe, line).truthy { kept.append(item) }
      }
      items = kept
    }
    if items.isEmpty {
      _ = try render(loop.otherwise, scope: scope, into: &output)
      return
    }
    let count = items.count
    // `loop` is made once and updated in place (the last iteration's scope is
    // gone by then, so nothing is copied): an iteration costs a scope, not a
    // dict of eleven entries and a closure. `loop.cycle` reads the current
    // position, as jinja2's bound method does.
    let position = JinjaLoopPosition()
    var info = JinjaDict()
    info["length"] = .int(count)
    info["depth"] = .int(1)
    info["depth0"] = .int(0)
    info["cycle"] = .callable(
      JinjaCallable(name: "cycle") { arguments, _ in
        arguments.positional.isEmpty
          ? .undefined("cycle") : arguments.positional[position.index % arguments.positional.count]
      })
    for (index, item) in items.enumerated() {
      // The loop's scope and `loop` dict live for one iteration: counted as one, not as bytes kept.
      try budget.iterate(line)
      position.index = index
      let body = JinjaScope(parent: scope)
      try assign(loop.target, item, scope: body, line: line)
      info["index"] = .int(index + 1)
      info["index0"] = .int(index)
      info["revindex"] = .int(count - index)
      info["revindex0"] = .int(count - index - 1)
      info["first"] = .bool(index == 0)
      info["last"] = .bool(index == count - 1)
      info["previtem"] = index > 0 ? items[index - 1] : .undefined("previtem")
      info["nextitem"] = index + 1 < count ? items[index + 1] : .undefined("nextitem")
      body.set("loop", .dict(info))
      if try render(loop.body, scope: body, into: &output) == .breakLoop { break }
    }
  }

  /// Binds `value` to a `set`/`for` target: a name, a tuple to unpack, or a namespace attribute.
  private func assign(_ target: JinjaExpression, _ value: JinjaValue, scope: JinjaScope, line: Int) throws(JinjaError) {
    switch target {
    case .name(let name):
      scope.set(name, value)
    case .tuple(let names):
      let items = try value.iterated(line: line, budget)
      guard items.count == names.count else {
        throw JinjaError(kind: .runtime, message: "cannot unpack \(items.count) values into \(names.count)", line: line)
      }
      for (name, item) in zip(names, items) { try assign(name, item, scope: scope, line: line) }
    case .attribute(.name(let base), let attribute):
      guard case .namespace(let namespace) = scope.lookup(base) else {
        throw JinjaError(kind: .runtime, message: "cannot assign attribute on non-namespace object", line: line)
      }
      // The one place a value can grow from one iteration to the next.
      namespace.depth = max(namespace.depth, try budget.checkDepth(of: value, line) + 1)
      try budget.allocate(elements: 2, line)
      namespace.attributes[attribute] = value
    default:
      throw JinjaError(kind: .syntax, message: "cannot assign to this target", line: line)
    }
  }

  /// A callable that renders `definition` with its arguments in a scope of its own.
  ///
  /// The closure holds `scope`, which stores the callable: a cycle, broken
  /// when the render ends (`JinjaBudget.finish` empties the scope).
  private func macro(_ definition: JinjaMacroDefinition, scope: JinjaScope) -> JinjaCallable {
    let budget = self.budget
    return JinjaCallable(name: definition.name) { arguments, line throws(JinjaError) in
      try budget.enterMacro(definition.name, line)
      defer { budget.leaveMacro() }
      let local = JinjaScope(parent: scope)
      for (position, (name, fallback)) in definition.parameters.enumerated() {
        if let value = arguments.value(position, name) {
          local.set(name, value)
        } else if let fallback {
          local.set(name, try evaluate(fallback, local, line))
        } else {
          local.set(name, .undefined(name))
        }
      }
      if let caller = arguments.keyword.first(where: { $0.0 == "caller" }) { local.set("caller", caller.1) }
      var output = ""
      _ = try render(definition.body, scope: local, into: &output)
      return .string(output)
    }
  }
}

/// Where a loop is, for its `loop.cycle`: one per loop, advanced in place.
private final class JinjaLoopPosition {
  var index = 0
}
