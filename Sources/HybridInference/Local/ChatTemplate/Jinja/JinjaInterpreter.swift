import Foundation

/// Runs a parsed template against its variables, writing the output.
///
/// Semantics follow jinja2 in transformers' sandbox: loops and macros have
/// their own scope, `namespace()` is the only way to carry state out of a
/// loop, undefined values print as nothing but fail when dereferenced, and
/// methods that would mutate a value (`append`, `pop`) are refused.
struct JinjaInterpreter {
  /// The clock `strftime_now` reads; fixed in tests.
  var now: Date

  enum Flow {
    case normal, breakLoop, continueLoop
  }

  func render(_ nodes: [JinjaNode], scope: JinjaScope, into output: inout String) throws(JinjaError) -> Flow {
    for node in nodes {
      let line = node.line
      switch node.statement {
      case .text(let text):
        output += text
      case .output(let expression):
        output += try evaluate(expression, scope, line).pythonString
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
        scope.set(definition.name, .callable(macro(definition, scope: scope)))
      case .callBlock(let call, let parameters, let body):
        let caller = macro(JinjaMacroDefinition(name: "caller", parameters: parameters, body: body), scope: scope)
        guard case .call(let callee, let written) = call else { break }
        var arguments = try evaluate(written, scope, line)
        arguments.keyword.append(("caller", .callable(caller)))
        output += try invoke(try evaluate(callee, scope, line), arguments, line).pythonString
      case .filterBlock(let filters, let body):
        var captured = ""
        let flow = try render(body, scope: scope, into: &captured)
        output += try applyFilters(filters, to: .string(captured), scope, line).pythonString
        if flow != .normal { return flow }
      case .breakLoop:
        return .breakLoop
      case .continueLoop:
        return .continueLoop
      }
    }
    return .normal
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
    var items = try evaluate(loop.iterable, scope, line).iterated(line: line)
    if let condition = loop.condition {
      var kept: [JinjaValue] = []
      for item in items {
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
    for (index, item) in items.enumerated() {
      let body = JinjaScope(parent: scope)
      try assign(loop.target, item, scope: body, line: line)
      var info = JinjaDict()
      info["index"] = .int(index + 1)
      info["index0"] = .int(index)
      info["revindex"] = .int(count - index)
      info["revindex0"] = .int(count - index - 1)
      info["first"] = .bool(index == 0)
      info["last"] = .bool(index == count - 1)
      info["length"] = .int(count)
      info["depth"] = .int(1)
      info["depth0"] = .int(0)
      info["previtem"] = index > 0 ? items[index - 1] : .undefined("previtem")
      info["nextitem"] = index + 1 < count ? items[index + 1] : .undefined("nextitem")
      info["cycle"] = .callable(
        JinjaCallable(name: "cycle") { arguments, _ in
          arguments.positional.isEmpty ? .undefined("cycle") : arguments.positional[index % arguments.positional.count]
        })
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
      let items = try value.iterated(line: line)
      guard items.count == names.count else {
        throw JinjaError(kind: .runtime, message: "cannot unpack \(items.count) values into \(names.count)", line: line)
      }
      for (name, item) in zip(names, items) { try assign(name, item, scope: scope, line: line) }
    case .attribute(.name(let base), let attribute):
      guard case .namespace(let namespace) = scope.lookup(base) else {
        throw JinjaError(kind: .runtime, message: "cannot assign attribute on non-namespace object", line: line)
      }
      namespace.attributes[attribute] = value
    default:
      throw JinjaError(kind: .syntax, message: "cannot assign to this target", line: line)
    }
  }

  /// A callable that renders `definition` with its arguments in a scope of its own.
  private func macro(_ definition: JinjaMacroDefinition, scope: JinjaScope) -> JinjaCallable {
    JinjaCallable(name: definition.name) { arguments, line throws(JinjaError) in
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
