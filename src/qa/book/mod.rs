//! Book-level QA: the checks that compare translations across units, run once over the
//! whole campaign by [`check_campaign`]. Every text is parsed into a [`Doc`] once ([`Parsed`])
//! and its clean prose computed once; each check works on those.
//!
//! | check | file | what |
//! |---|---|---|
//! | `completeness` | [`crate::qa::book::completeness`] | every unit translated; chapter outputs equal their units joined |
//! | `untranslated` | here | a unit's target-script share far below the campaign's |
//! | `length_ratio` | [`crate::qa::book::length`] | robust outliers of target/source prose length |
//! | `term_drift` | [`crate::qa::book::drift`] | a term kept in some units and rendered in others, or rendered several ways |
//! | `review_markers` | [`crate::qa::book::review_markers`] | renderings flagged as new, unflagged new glosses, conflicts |
//! | `xref_targets`, `anchor_links`, `footnote_pairs` | [`crate::qa::unit::xref`] | references resolve to captions, headings and footnote definitions of the translated book |
//! | `site_links` | [`crate::qa::book::site_links`] | a site's internal links (other chapters' anchors, files, includes) resolve in the translated site |
//!
//! Per-entry glossary adherence ([`crate::qa::unit::glossary::adherence`]) is returned for the report; the
//! per-unit `glossary` errors themselves come from the per-unit checks.
//!
//! ## `untranslated` (campaign norm)
//! The share of target-script letters in a unit's clean prose ([`crate::qa::view::doc::script_share`],
//! units with at least [`MIN_SHARE_LETTERS`] letters) is compared with the median share of all
//! such units: a share below [`SHARE_FACTOR`] × median is an `error` (the unit is mostly left in
//! the source language, e.g. an echoed source). A median needs at least
//! [`MIN_SHARE_UNITS`] units; with fewer the check is skipped (the per-unit checks still apply
//! their fixed thresholds). For Latin-script targets of Latin-script sources the share cannot
//! tell the languages apart, so the check is skipped too.

pub mod completeness;
pub mod drift;
pub mod length;
pub mod review_markers;
pub mod site_links;

use serde::Serialize;

use crate::lang::Script;
use crate::qa::book::drift::DriftRow;
use crate::qa::book::length::LengthNorm;
use crate::qa::book::review_markers::ReviewTerm;
use crate::qa::unit::glossary::Adherence;
use crate::qa::view::doc::script_share;
use crate::qa::{ChapterText, Finding, Parsed, QaContext, Severity, UnitText};

/// Campaign norms the checks measured, for the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Norms {
    pub length: LengthNorm,
    pub script_share: ShareNorm,
}

/// The campaign's target-script share norm (`untranslated`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShareNorm {
    /// Units with at least [`MIN_SHARE_LETTERS`] letters in their translation.
    pub units: usize,
    /// Median share, when the check ran.
    pub median: Option<f64>,
    /// Shares below this are errors.
    pub threshold: Option<f64>,
}

/// Everything the campaign-level checks found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignQa {
    /// Campaign-level findings only (the per-unit checks report their own).
    pub findings: Vec<Finding>,
    /// Term × unit renderings, drifting terms first.
    pub drift: Vec<DriftRow>,
    /// Renderings flagged for review, and new glosses without the flag.
    pub review_terms: Vec<ReviewTerm>,
    /// Adherence per termbase entry.
    pub adherence: Vec<Adherence>,
    pub norms: Norms,
}

/// Minimum letters in a translation's prose for its script share to count.
pub const MIN_SHARE_LETTERS: usize = 40;
/// Minimum units with a share to compute the campaign median.
pub const MIN_SHARE_UNITS: usize = 8;
/// A share below this factor times the median is an error.
pub const SHARE_FACTOR: f64 = 0.5;

/// Runs every campaign-level check (see the module docs) over `units` (in campaign order) and
/// the written `chapters`.
pub fn check_campaign(ctx: &QaContext, units: &[UnitText], chapters: &[ChapterText]) -> CampaignQa {
    let mut findings = crate::qa::book::completeness::check(units, chapters);
    let translated: Vec<UnitText> = units
        .iter()
        .filter(|u| u.target.is_some())
        .copied()
        .collect();
    let rest = check_translations(ctx, &translated);
    findings.extend(rest.findings.iter().cloned());
    CampaignQa {
        findings,
        drift: rest.drift.clone(),
        review_terms: rest.review_terms.clone(),
        adherence: rest.adherence.clone(),
        norms: rest.norms.clone(),
    }
}

/// The campaign-level checks that compare translations: [`check_campaign`] without
/// `completeness`. Units without a target are ignored. The result is remembered, in the
/// context's [`crate::qa::QaCache`], for the last context and units seen: a campaign runs the
/// campaign-level checks after every round and again for its report, usually on the very same
/// texts, and on a whole book they cost more than the rest of the run's local work. The key is
/// a hash of the context and of every unit's ids and texts (SipHash, std's `DefaultHasher`).
pub fn check_translations(ctx: &QaContext, units: &[UnitText]) -> std::sync::Arc<CampaignQa> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_vec(&(
        &ctx.source_lang,
        &ctx.target_lang,
        &ctx.termbase,
        &ctx.review_marker,
        ctx.agent_entries_approved,
    ))
    .expect("qa context serialises")
    .hash(&mut h);
    for u in units {
        (u.unit, u.chapter, u.source, u.target).hash(&mut h);
    }
    ctx.cache()
        .translations(h.finish(), || translation_checks(ctx, units))
}

/// The campaign-level checks that compare translations (everything but `completeness`, which
/// needs the written chapters). Units without a target are ignored by every one of them.
fn translation_checks(ctx: &QaContext, units: &[UnitText]) -> CampaignQa {
    crate::qa::book::drift::warm_candidates(ctx, units);
    let parsed = Parsed::all(units);
    let mut findings = Vec::new();
    let (f, script_share) = untranslated(ctx, &parsed);
    findings.extend(f);
    let (f, length) = crate::qa::book::length::check(ctx, &parsed);
    findings.extend(f);
    // A unit left in the source language "keeps" every term; it is reported as untranslated
    // and must not count as evidence of drift.
    let untranslated_units: std::collections::HashSet<&str> = findings
        .iter()
        .filter(|f| f.check == "untranslated" && f.severity == Severity::Error)
        .map(|f| f.unit.as_str())
        .collect();
    let floor = (ctx.target_lang.script != Script::Latin)
        .then_some(crate::qa::unit::untranslated::SCRIPT_FLOOR);
    // References, not clones: a clone of every parsed unit doubled the peak memory of the
    // campaign-level QA on a large book.
    let translated: Vec<&Parsed> = parsed
        .iter()
        .filter(|p| !untranslated_units.contains(p.unit))
        .filter(|p| match (&p.tgt, floor) {
            (Some(t), Some(floor)) => {
                crate::qa::view::doc::script_share(&ctx.target_lang, t, MIN_SHARE_LETTERS)
                    .is_none_or(|(s, _)| s >= floor)
            }
            _ => true,
        })
        .collect();
    let (f, drift) = crate::qa::book::drift::check(ctx, &translated);
    findings.extend(f);
    let (f, review_terms) = crate::qa::book::review_markers::check(ctx, &parsed);
    findings.extend(f);
    findings.extend(crate::qa::unit::xref::check_book(ctx, &parsed));
    findings.extend(crate::qa::book::site_links::check(
        ctx,
        &parsed.iter().collect::<Vec<_>>(),
    ));
    let adherence = crate::qa::unit::glossary::adherence_parsed(ctx, &parsed);
    CampaignQa {
        findings,
        drift,
        review_terms,
        adherence,
        norms: Norms {
            length,
            script_share,
        },
    }
}

/// The campaign-level `untranslated` check (see the module docs).
pub(crate) fn untranslated(ctx: &QaContext, units: &[Parsed]) -> (Vec<Finding>, ShareNorm) {
    let mut norm = ShareNorm {
        units: 0,
        median: None,
        threshold: None,
    };
    if ctx.target_lang.script == Script::Latin && ctx.source_lang.script == Script::Latin {
        return (Vec::new(), norm);
    }
    let shares: Vec<(usize, f64)> = units
        .iter()
        .enumerate()
        .filter_map(|(i, u)| {
            let tgt = u.tgt.as_ref()?;
            script_share(&ctx.target_lang, tgt, MIN_SHARE_LETTERS).map(|(s, _)| (i, s))
        })
        .collect();
    norm.units = shares.len();
    if shares.len() < MIN_SHARE_UNITS {
        return (Vec::new(), norm);
    }
    let median = crate::qa::book::length::median(&shares.iter().map(|s| s.1).collect::<Vec<_>>());
    let threshold = SHARE_FACTOR * median;
    norm.median = Some(median);
    norm.threshold = Some(threshold);
    let findings = shares
        .iter()
        .filter(|(_, s)| *s < threshold)
        .map(|&(i, s)| {
            let u = &units[i];
            u.locate(Finding::new(
                "untranslated",
                Severity::Error,
                format!(
                    "only {:.0}% of the letters are {} script, against a campaign median of {:.0}% (threshold {:.0}%): the unit looks untranslated; translate it into {}",
                    s * 100.0,
                    ctx.target_lang.name,
                    median * 100.0,
                    threshold * 100.0,
                    ctx.target_lang.name
                ),
                u.src_prose(),
                u.tgt_prose().unwrap_or(""),
            ))
        })
        .collect();
    (findings, norm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::qa::unit::glossary::entry;
    use crate::termbase::Termbase;

    /// (unit, chapter, source, clean translation)
    const UNITS: &[(&str, &str, &str, &str)] = &[
        (
            "c01-000",
            "c01",
            "# Agents\n\nAn Agent is a program that uses a language model to decide what to do next. It reads the task, plans a few steps, calls tools such as a search engine or a code runner, and looks at each result before it chooses the next step. The loop ends when the task is done or the budget runs out.\n\n",
            "# 智能体\n\n智能体是一种借助语言模型决定下一步做什么的程序。它阅读任务，规划几个步骤，调用搜索引擎或代码执行器等工具，并在选择下一步之前查看每个结果。当任务完成或预算用尽时，循环就会结束。\n\n",
        ),
        (
            "c01-001",
            "c01",
            "Every call to the model sees only what fits in its context window. The context window holds the instructions, the conversation so far and the results of earlier tool calls. When it fills up, the Agent must drop or summarise old messages, and it may forget details that mattered.\n\n",
            "模型的每次调用只能看到上下文窗口（context window）[待审]中放得下的内容。上下文窗口里有指令、到目前为止的对话以及之前工具调用的结果。窗口被填满时，智能体必须丢弃或总结旧消息，也可能因此忘记重要的细节。\n\n",
        ),
        (
            "c01-002",
            "c01",
            "A larger context window is not free. Each extra token costs time and money, and models tend to pay less attention to the middle of a very long input. Good Agents therefore keep the context window small: they load documents only when needed and remove results they no longer use.\n\n",
            "更大的上下文窗口并不是免费的。每多一个 token 都要花费时间和金钱，而且模型往往不太关注超长输入的中间部分。因此，好的智能体会让上下文窗口保持精简：只在需要时加载文档，并删除不再使用的结果。\n\n",
        ),
        (
            "c01-003",
            "c01",
            "Tools give the Agent hands. A tool is described by a name, a short explanation and a schema for its arguments. The model never runs a tool itself; it writes a request, the runtime executes it, and the result comes back as a new message that the model reads on its next turn.\n\n",
            "工具给了智能体一双手。每个工具都由名称、简短说明和参数模式来描述。模型从不亲自运行工具：它写出请求，由运行时执行，结果再作为一条新消息返回，模型在下一轮读取这条消息。\n\n",
        ),
        (
            "c01-004",
            "c01",
            "Some actions are risky, such as deleting files or sending money. A guardrail is a rule checked outside the model that blocks such actions or asks a human to confirm them. Guardrails should be simple, tested and logged, because a model can be persuaded to ignore instructions written in its prompt.\n",
            "有些操作是有风险的，比如删除文件或转账。护栏（guardrail）[待审]是在模型之外检查的规则，用来阻止这类操作或请人类确认。护栏应当简单、经过测试并记录日志，因为模型可能被说服去忽略写在提示词中的指令。\n",
        ),
        (
            "c02-000",
            "c02",
            "# Memory\n\nAn Agent that works for hours cannot keep everything in its context window. It writes notes to files, stores facts in a database and searches them later. This external memory lets the Agent resume a task after a restart and share what it learned with other Agents.\n\n",
            "# 记忆\n\n连续工作数小时的智能体无法把所有内容都放在上下文窗口中。它把笔记写入文件，把事实存进数据库，之后再检索。这种外部记忆让智能体在重启后能继续任务，也能与其他智能体分享学到的东西。\n\n",
        ),
        (
            "c02-001",
            "c02",
            "Memory needs maintenance. Old notes become wrong when the code changes, and duplicated facts confuse the model. A simple rule helps: each fact lives in one place, carries the date it was written, and is deleted or corrected as soon as the Agent notices that it no longer holds.\n\n",
            "记忆需要维护。代码变化后，旧笔记就会出错，重复的事实也会让模型困惑。一条简单的规则很有用：每个事实只存放在一个地方，注明写入日期，一旦智能体发现它不再成立，就立即删除或更正。\n\n",
        ),
        (
            "c02-002",
            "c02",
            "Retrieval brings the right notes back. The Agent turns the question into a query, finds the most similar passages and copies the best few into the context window. Retrieval quality matters more than the size of the store: ten precise passages beat a hundred vague ones.\n\n",
            "检索负责把合适的笔记找回来。智能体把问题转换成查询，找出最相似的段落，再把最好的几段复制进上下文窗口。检索质量比存储规模更重要：十个精准的段落胜过一百个模糊的段落。\n\n",
        ),
        (
            "c02-003",
            "c02",
            "Evaluation tells you whether the Agent is getting better. Collect real tasks, write down what a correct result looks like, and run the Agent on all of them after every change. Track the success rate, the cost per task and the time per task, and read the failures one by one.\n\n",
            "评估能告诉你智能体是否在进步。收集真实任务，写下正确结果应有的样子，每次修改后都在所有任务上运行智能体。跟踪成功率、每个任务的成本和耗时，并逐一阅读失败的案例。\n\n",
        ),
        (
            "c02-004",
            "c02",
            "Long tasks need a plan. Before acting, the Agent writes the steps it intends to take and keeps the list in its context window, ticking off each step as it finishes. When a step fails, it revises the plan instead of repeating the same action, which saves both tokens and time.\n\n",
            "长任务需要计划。在行动之前，智能体先写下打算采取的步骤，并把清单保存在上下文窗口中，每完成一步就勾掉一步。某一步失败时，它会修改计划，而不是重复同样的操作，这样既节省 token 也节省时间。\n\n",
        ),
        (
            "c02-005",
            "c02",
            "Safety reviews should look at every guardrail together. A guardrail that blocks payments is useless if another tool can send money directly. List every tool, mark the ones with side effects, and make sure each of them passes through at least one check that a human can audit.\n\n",
            "安全审查应当把所有护栏（guardrail）[待审]放在一起检查。如果另一个工具能直接转账，那么拦截付款的护栏就毫无用处。列出每个工具，标记出有副作用的工具，并确保每个工具都至少经过一道人类可以审计的检查。\n\n",
        ),
        (
            "c02-006",
            "c02",
            "Finally, keep a log of everything the Agent does. Each model call, tool request and result should be written with a timestamp, so that a failure can be replayed step by step. Logs also show where the money goes, which is often the first question a team asks.\n",
            "最后，要记录智能体所做的一切。每次模型调用、工具请求和结果都应带上时间戳写入日志，以便逐步重放失败的过程。日志还能显示钱花在了哪里，这往往是团队提出的第一个问题。\n",
        ),
    ];

    fn ctx() -> QaContext {
        QaContext::new(
            &Lang::parse("en"),
            &Lang::parse("zh-CN"),
            &Termbase::from_entries([entry("Agent", "智能体", &["代理"])]),
        )
    }

    /// Runs the campaign with `targets` (unit id → translation), writing each chapter's output
    /// as its units joined.
    fn run(targets: &[(String, String)]) -> CampaignQa {
        let units: Vec<UnitText> = UNITS
            .iter()
            .zip(targets)
            .map(|((id, ch, src, _), (_, t))| UnitText {
                unit: id,
                chapter: ch,
                source: src,
                target: Some(t),
            })
            .collect();
        let outputs: Vec<(String, String)> = ["c01", "c02"]
            .iter()
            .map(|c| {
                let joined: String = units
                    .iter()
                    .filter(|u| u.chapter == *c)
                    .filter_map(|u| u.target)
                    .collect();
                (c.to_string(), joined)
            })
            .collect();
        let chapters: Vec<ChapterText> = outputs
            .iter()
            .map(|(c, o)| ChapterText {
                chapter: c,
                output: Some(o),
            })
            .collect();
        check_campaign(&ctx(), &units, &chapters)
    }

    fn clean() -> Vec<(String, String)> {
        UNITS
            .iter()
            .map(|u| (u.0.to_string(), u.3.to_string()))
            .collect()
    }

    fn set(targets: &mut [(String, String)], unit: &str, text: &str) {
        targets.iter_mut().find(|t| t.0 == unit).unwrap().1 = text.to_string();
    }

    fn has(qa: &CampaignQa, check: &str, severity: Severity, unit: &str) -> bool {
        qa.findings
            .iter()
            .any(|f| f.check == check && f.severity == severity && f.unit == unit)
    }

    #[test]
    fn clean_campaign_has_no_error() {
        let qa = run(&clean());
        let bad: Vec<&Finding> = qa
            .findings
            .iter()
            .filter(|f| f.severity != Severity::Info)
            .collect();
        assert!(bad.is_empty(), "{bad:#?}");
        assert_eq!(
            qa.norms.length.basis,
            crate::qa::book::length::NormBasis::Campaign
        );
        assert_eq!(qa.norms.length.eligible_units, 12);
        let median = qa.norms.length.median.unwrap();
        assert!((0.30..0.45).contains(&median), "{median}");
        assert!(qa.norms.script_share.median.unwrap() > 0.9);
        // The renderings marked for review: one info finding per term and rendering.
        let marked: Vec<(Option<&str>, &str, &str, bool)> = qa
            .review_terms
            .iter()
            .map(|t| {
                (
                    t.term.as_deref(),
                    t.rendering.as_str(),
                    t.unit.as_str(),
                    t.marked,
                )
            })
            .collect();
        assert_eq!(
            marked,
            vec![
                (Some("context window"), "上下文窗口", "c01-001", true),
                (Some("guardrail"), "护栏", "c01-004", true),
                (Some("guardrail"), "护栏", "c02-005", true),
            ]
        );
        let got: Vec<(&str, Severity, &str)> = qa
            .findings
            .iter()
            .map(|f| (f.check.as_str(), f.severity, f.unit.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("review_markers", Severity::Info, "c01-001"),
                ("review_markers", Severity::Info, "c01-004"),
            ]
        );
        assert!(qa.findings[1].message.contains("marked [待审] in 2 units"));
        let row = qa
            .drift
            .iter()
            .find(|r| r.term == "context window")
            .unwrap();
        assert!(!row.drifting);
        assert_eq!(row.cells.keys().collect::<Vec<_>>(), vec!["上下文窗口"]);
        assert_eq!(row.cells["上下文窗口"].len(), 5);
        let agent = &qa.adherence[0];
        assert_eq!(
            (agent.units, agent.units_correct, agent.units_violating),
            (10, 10, 0)
        );
    }

    #[test]
    fn faulty_campaign_reports_each_problem() {
        let mut t = clean();
        // c02-001 echoes its source; c02-003 stops after its first sentence.
        set(&mut t, "c02-001", UNITS[6].2);
        set(&mut t, "c02-003", "评估能告诉你智能体是否在进步。\n\n");
        // "context window" is rendered 语境窗口 in two units of chapter 2.
        set(
            &mut t,
            "c02-000",
            &UNITS[5]
                .3
                .replace("上下文窗口中", "语境窗口（context window）中"),
        );
        set(
            &mut t,
            "c02-002",
            &UNITS[7].3.replace("上下文窗口", "语境窗口"),
        );
        // "guardrail" is marked with another rendering in c02-005.
        set(&mut t, "c02-005", &UNITS[10].3.replace("护栏", "安全防线"));
        let qa = run(&t);
        for f in &qa.findings {
            eprintln!("{:?} {} {}: {}", f.severity, f.check, f.unit, f.message);
        }
        assert!(has(&qa, "untranslated", Severity::Error, "c02-001"));
        assert!(has(&qa, "length_ratio", Severity::Error, "c02-003"));
        assert!(has(&qa, "length_ratio", Severity::Warning, "c02-001"));
        let drift = qa
            .findings
            .iter()
            .find(|f| f.check == "term_drift" && f.message.starts_with("\"context window\""))
            .expect("drift of context window");
        assert_eq!(drift.severity, Severity::Warning);
        assert_eq!(
            drift.message,
            "\"context window\" is rendered 上下文窗口 in 3 units, 语境窗口 in 2; choose one rendering (most units: 上下文窗口), add it to the glossary and revise the other units"
        );
        let conflict = qa
            .findings
            .iter()
            .find(|f| f.check == "review_markers" && f.message.starts_with("\"guardrail\""))
            .expect("marker conflict");
        assert_eq!(
            (conflict.severity, conflict.unit.as_str()),
            (Severity::Warning, "")
        );
        // The new rendering 语境窗口 was not flagged.
        assert!(qa.findings.iter().any(|f| f.check == "review_markers"
            && f.severity == Severity::Warning
            && f.unit == "c02-000"
            && f.message.contains("new rendering 语境窗口 for \"context window\" is not in the glossary and not marked [待审]")));
        assert!(
            conflict
                .message
                .starts_with("\"guardrail\" carries 2 different renderings marked [待审]: 护栏 (1 unit), 安全防线 (1 unit)"),
            "{}",
            conflict.message
        );
        // The echoed unit keeps "Agent", but an untranslated unit is reported as such and is
        // no evidence of drift.
        assert!(
            !qa.findings
                .iter()
                .any(|f| f.check == "term_drift" && f.message.starts_with("\"Agent\""))
        );
        let errors: Vec<(&str, &str)> = qa
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| (f.check.as_str(), f.unit.as_str()))
            .collect();
        assert_eq!(
            errors,
            vec![("untranslated", "c02-001"), ("length_ratio", "c02-003")]
        );
        assert_eq!(qa.adherence[0].violating_units, vec!["c02-001"]);
    }

    #[test]
    fn missing_translation_and_stale_output() {
        let t = clean();
        let mut units: Vec<UnitText> = UNITS
            .iter()
            .zip(&t)
            .map(|((id, ch, src, _), (_, t))| UnitText {
                unit: id,
                chapter: ch,
                source: src,
                target: Some(t),
            })
            .collect();
        units[3].target = None;
        let stale = "# 智能体\n";
        let chapters = [
            ChapterText {
                chapter: "c01",
                output: None,
            },
            ChapterText {
                chapter: "c02",
                output: Some(stale),
            },
        ];
        let qa = check_campaign(&ctx(), &units, &chapters);
        let got: Vec<(&str, &str, &str)> = qa
            .findings
            .iter()
            .filter(|f| f.check == "completeness")
            .map(|f| (f.unit.as_str(), f.chapter.as_str(), f.message.as_str()))
            .collect();
        assert_eq!(got.len(), 3, "{got:#?}");
        assert_eq!(got[0].0, "c01-003");
        assert!(got[1].2.contains("chapter c01 has no output file"));
        assert!(
            got[2]
                .2
                .starts_with("chapter c02's output (12 bytes) differs"),
            "{}",
            got[2].2
        );
        assert!(
            got[2]
                .2
                .contains("from byte 2 (line 1, column 3, in unit c02-000)"),
            "{}",
            got[2].2
        );
    }

    fn translated_units() -> Vec<UnitText<'static>> {
        UNITS
            .iter()
            .map(|(id, ch, src, tgt)| UnitText {
                unit: id,
                chapter: ch,
                source: src,
                target: Some(tgt),
            })
            .collect()
    }

    /// Regression (the caches were process-wide statics): the campaign-level checks,
    /// the drift candidates and the glossary automata were remembered in statics shared by
    /// every context of the process. Now a context built with `QaContext::new` has its own
    /// memo, and a context given a cache shares it (as a campaign's contexts do).
    #[test]
    fn process_wide_qa_caches_are_owned_by_the_qa_context() {
        let units = translated_units();
        let a = ctx();
        let first = check_translations(&a, &units);
        // The same context (and its clones) reuse the result.
        assert!(std::sync::Arc::ptr_eq(
            &first,
            &check_translations(&a, &units)
        ));
        assert!(std::sync::Arc::ptr_eq(
            &first,
            &check_translations(&a.clone(), &units)
        ));
        // Another context computes its own, equal result: nothing is shared between owners.
        let b = ctx();
        assert!(!b.cache().same(a.cache()));
        let other = check_translations(&b, &units);
        assert!(!std::sync::Arc::ptr_eq(&first, &other));
        assert_eq!(*first, *other);
        assert!(
            first.drift.iter().any(|r| r.term == "context window"),
            "{:?}",
            first.drift
        );
        // A context given `a`'s cache (a campaign hands out its own) shares it.
        let c = ctx().with_cache(a.cache().clone());
        assert!(c.cache().same(a.cache()));
        assert!(std::sync::Arc::ptr_eq(
            &first,
            &check_translations(&c, &units)
        ));
    }

    #[test]
    fn a_shared_qa_cache_never_serves_a_changed_context_a_stale_result() {
        let units = translated_units();
        let a = ctx();
        let before = check_translations(&a, &units);
        assert!(before.adherence.iter().all(|x| x.source != "guardrail"));
        // The same cache, a termbase with one more entry: a new result, equal to a fresh
        // context's.
        let mut b = ctx().with_cache(a.cache().clone());
        b.termbase.entries.push(entry("guardrail", "护栏", &[]));
        let after = check_translations(&b, &units);
        assert!(!std::sync::Arc::ptr_eq(&before, &after));
        let mut fresh = ctx();
        fresh.termbase.entries.push(entry("guardrail", "护栏", &[]));
        assert_eq!(*after, *check_translations(&fresh, &units));
        assert!(after.adherence.iter().any(|x| x.source == "guardrail"));
        // Per-unit glossary automata follow the termbase too: a forbidden rendering added
        // later is found.
        let mut d = ctx().with_cache(a.cache().clone());
        let u = &UNITS[4];
        assert!(crate::qa::check_unit(&d, u.0, u.1, u.2, u.3).is_empty());
        d.termbase
            .entries
            .push(entry("guardrail", "防护栏", &["护栏"]));
        let f = crate::qa::check_unit(&d, u.0, u.1, u.2, u.3);
        assert!(
            f.iter()
                .any(|f| f.check == "glossary" && f.severity == Severity::Error),
            "{f:#?}"
        );
    }
}
