//! A generated Soufflé project, what `cargo xtask bench` reads through the `dlc` binary
//! to measure compile time on a program of the size real analyses have: a `main.dl`
//! that defines a function-like macro and `#include`s one file per part, each part a
//! component, instantiated once, declaring [`RELATIONS_PER_FILE`] relations with a base
//! rule and a recursive rule of a long body that joins relations of an earlier part's
//! instance.

use std::fmt::Write as _;

/// The relations each part declares.
pub const RELATIONS_PER_FILE: u32 = 20;

/// The atoms of a part's recursive rules' bodies, the macro's two counted as one.
const LONG_BODY: u32 = 8;

/// The files of a project of `parts` parts, `main.dl` first, each as (name, text).
pub fn files(parts: u32) -> Vec<(String, String)> {
    let mut main = String::from(
        "// A generated project: one file per part, included in order.\n\
         #define EDGE(x, y) e(x, y), x != y\n\
         .decl e(x:number, y:number)\n.input e\n.decl s(x:number, t:symbol)\n.input s\n",
    );
    let mut out = Vec::with_capacity(parts as usize + 1);
    for part in 0..parts {
        let _ = writeln!(main, "#include \"part{part}.dl\"");
        out.push((format!("part{part}.dl"), part_text(part)));
    }
    if parts > 0 {
        let _ = writeln!(main, ".output i{}.p_0", parts - 1);
    }
    out.insert(0, ("main.dl".to_string(), main));
    out
}

/// One part: a component of its relations, each with a base rule (over the part's
/// previous relation, or the input for the first) and a recursive rule whose body walks a
/// relation of the part half-way back; and its one instance, `i{part}`.
fn part_text(part: u32) -> String {
    let mut text = format!("// Part {part}.\n.comp Part{part}<T> {{\n");
    let earlier = part / 2;
    for r in 0..RELATIONS_PER_FILE {
        let _ = writeln!(text, ".decl p_{r}(a:T, b:T, c:symbol)");
        if r == 0 {
            let _ = writeln!(text, "p_0(a, b, c) :- EDGE(a, b), s(a, c).");
        } else {
            let _ = writeln!(text, "p_{r}(a, b, c) :- p_{}(a, b, c), EDGE(b, a).", r - 1);
        }
        let mut body = vec![format!("p_{r}(a, x0, c)")];
        for k in 1..LONG_BODY - 2 {
            body.push(format!("i{earlier}.p_{}(x{}, x{k}, _)", (r + k) % RELATIONS_PER_FILE, k - 1));
        }
        body.push(format!("EDGE(x{}, d)", LONG_BODY - 3));
        body.push("s(d, c)".to_string());
        let _ = writeln!(text, "p_{r}(a, d, c) :-\n    {}.", body.join(",\n    "));
    }
    let _ = writeln!(text, "}}\n.init i{part} = Part{part}<number>");
    text
}

/// The lines of a project of `parts` parts.
pub fn lines(parts: u32) -> usize {
    files(parts).iter().map(|(_, text)| text.lines().count()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_includes_every_part_and_grows_with_it() {
        let project = files(3);
        let names: Vec<&str> = project.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["main.dl", "part0.dl", "part1.dl", "part2.dl"]);
        assert_eq!(project[0].1.matches("#include").count(), 3);
        assert_eq!(project[2].1.matches(".decl").count(), RELATIONS_PER_FILE as usize);
        // Part 1 reads part 0's instance's relations in its long bodies.
        assert!(project[2].1.contains("i0.p_1(x0, x1, _)"), "{}", project[2].1);
        assert!(project[2].1.contains(".init i1 = Part1<number>"), "{}", project[2].1);
        assert_eq!(lines(300), 67_507);
    }
}
