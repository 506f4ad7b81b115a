//! Length ratio (check `length_ratio`, campaign level): a translation much shorter or longer
//! than the campaign's other translations, relative to its source, has likely lost or gained
//! text.
//!
//! Per unit, `ratio = target chars / source chars`, counting the non-whitespace characters of
//! the clean prose (code, math, HTML and URLs are copied, so they would only dilute the ratio;
//! whitespace is left out because Chinese and Japanese do not space words). Only units with at
//! least [`MIN_SOURCE_CHARS`] source characters are eligible: short units have noisy ratios.
//!
//! **Campaign norm** (at least [`MIN_UNITS`] eligible units): the median ratio and the median
//! absolute deviation (MAD). Each unit gets the modified z-score of Iglewicz & Hoaglin (1993,
//! *How to Detect and Handle Outliers*, ASQC Basic References in Quality Control 16):
//! `z = 0.6745 · (x − median) / MAD`; `|z| > 3.5` is a `warning`. When MAD is 0 (more than half
//! the ratios equal) the mean absolute deviation is used instead, `z = (x − median) /
//! (1.253314 · MeanAD)`, the usual fallback; when both are 0 no unit is an outlier by z.
//! Independently, `ratio < 0.35 × median` is an `error` (likely truncation or omission) and
//! replaces the warning.
//!
//! **Prior** (fewer eligible units): a per-language-pair range of ratios, [`prior`]. Ratios
//! outside `[0.5 × low, 2 × high]` are `warning`s. For en→zh the range is 0.30–0.45, which the
//! zh and en editions of the ai-agent-book corpus (the zh original and its en translation, 313
//! sections aligned by headings) confirm: median 0.37, interquartile range 0.33–0.41. zh→en is
//! its inverse. Other pairs have no prior, and the check needs the campaign norm.

use serde::Serialize;

use crate::lang::{Lang, Script};
use crate::qa::Parsed;
use crate::qa::{Finding, QaContext, Severity};

/// Check name of the findings.
pub const CHECK: &str = "length_ratio";
/// Minimum source prose characters (non-whitespace) for a unit to be eligible.
pub const MIN_SOURCE_CHARS: usize = 200;
/// Minimum eligible units for a campaign norm.
pub const MIN_UNITS: usize = 8;
/// Modified z-score beyond which a ratio is an outlier (Iglewicz & Hoaglin).
pub const Z_LIMIT: f64 = 3.5;
/// A ratio below this fraction of the norm is an error (truncation).
pub const TRUNCATION: f64 = 0.35;

/// Where the norm came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NormBasis {
    /// Median and MAD of the campaign's own ratios.
    Campaign,
    /// The language pair's prior range.
    Prior,
    /// Too few units and no prior: not checked.
    None,
}

/// One eligible unit's ratio.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnitRatio {
    pub unit: String,
    pub source_chars: usize,
    pub target_chars: usize,
    pub ratio: f64,
    /// Modified z-score (campaign norm only).
    pub z: Option<f64>,
}

/// The length norm used, for the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LengthNorm {
    pub basis: NormBasis,
    pub eligible_units: usize,
    pub median: Option<f64>,
    pub mad: Option<f64>,
    /// The prior range `(low, high)` for the language pair, if known.
    pub prior: Option<(f64, f64)>,
    pub ratios: Vec<UnitRatio>,
}

/// Non-whitespace characters of a clean prose text.
pub fn prose_chars(prose: &str) -> usize {
    prose.chars().filter(|c| !c.is_whitespace()).count()
}

/// The prior range of target/source prose-character ratios for a language pair (see the module
/// docs), or `None`.
pub fn prior(source: &Lang, target: &Lang) -> Option<(f64, f64)> {
    let (s, t) = (source.primary(), target.script);
    match (s.as_str(), t) {
        ("en", Script::Han) => Some((0.30, 0.45)),
        ("zh", Script::Latin) if target.primary() == "en" => Some((1.0 / 0.45, 1.0 / 0.30)),
        _ => None,
    }
}

/// Median of `xs` (0 for an empty slice).
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median absolute deviation from `med`.
pub fn mad(xs: &[f64], med: f64) -> f64 {
    median(&xs.iter().map(|x| (x - med).abs()).collect::<Vec<_>>())
}

/// Modified z-scores of `xs` around their median (see the module docs); `None` when every
/// value equals the median.
pub fn modified_z(xs: &[f64]) -> Option<Vec<f64>> {
    let med = median(xs);
    let m = mad(xs, med);
    if m > 0.0 {
        return Some(xs.iter().map(|x| 0.6745 * (x - med) / m).collect());
    }
    let mean_ad = xs.iter().map(|x| (x - med).abs()).sum::<f64>() / xs.len().max(1) as f64;
    (mean_ad > 0.0).then(|| {
        xs.iter()
            .map(|x| (x - med) / (1.253314 * mean_ad))
            .collect()
    })
}

/// Runs the check over the campaign's parsed units.
pub(crate) fn check(ctx: &QaContext, units: &[Parsed]) -> (Vec<Finding>, LengthNorm) {
    let mut idx = Vec::new();
    let mut ratios = Vec::new();
    for (i, u) in units.iter().enumerate() {
        let Some(t) = u.tgt_prose() else { continue };
        let s = prose_chars(u.src_prose());
        if s < MIN_SOURCE_CHARS {
            continue;
        }
        let t = prose_chars(t);
        idx.push(i);
        ratios.push(UnitRatio {
            unit: u.unit.to_string(),
            source_chars: s,
            target_chars: t,
            ratio: t as f64 / s as f64,
            z: None,
        });
    }
    let prior = prior(&ctx.source_lang, &ctx.target_lang);
    let mut norm = LengthNorm {
        basis: NormBasis::None,
        eligible_units: ratios.len(),
        median: None,
        mad: None,
        prior,
        ratios: Vec::new(),
    };
    let mut findings = Vec::new();
    let xs: Vec<f64> = ratios.iter().map(|r| r.ratio).collect();
    let describe = |r: &UnitRatio| {
        format!(
            "the translation has {} prose characters for {} in the source (ratio {:.2})",
            r.target_chars, r.source_chars, r.ratio
        )
    };
    if ratios.len() >= MIN_UNITS {
        let med = median(&xs);
        norm.basis = NormBasis::Campaign;
        norm.median = Some(med);
        norm.mad = Some(mad(&xs, med));
        let zs = modified_z(&xs);
        for (k, r) in ratios.iter_mut().enumerate() {
            r.z = zs.as_ref().map(|z| z[k]);
            let u = &units[idx[k]];
            let tgt = u.tgt_prose().unwrap_or("");
            if r.ratio < TRUNCATION * med {
                findings.push(u.locate(Finding::new(
                    CHECK,
                    Severity::Error,
                    format!(
                        "{}, below {TRUNCATION} × the campaign median {med:.2}: text is likely truncated or omitted; translate the whole unit",
                        describe(r)
                    ),
                    u.src_prose(),
                    tgt,
                )));
            } else if let Some(z) = r.z.filter(|z| z.abs() > Z_LIMIT) {
                let what = if z < 0.0 {
                    "much shorter than the campaign's other translations: check for omitted sentences"
                } else {
                    "much longer than the campaign's other translations: check for added or untranslated text"
                };
                findings.push(u.locate(Finding::new(
                    CHECK,
                    Severity::Warning,
                    format!(
                        "{}, modified z-score {z:.1} against the campaign median {med:.2}: {what}",
                        describe(r)
                    ),
                    u.src_prose(),
                    tgt,
                )));
            }
        }
    } else if let Some((low, high)) = prior {
        norm.basis = NormBasis::Prior;
        for (k, r) in ratios.iter().enumerate() {
            let u = &units[idx[k]];
            let tgt = u.tgt_prose().unwrap_or("");
            let what = if r.ratio < 0.5 * low {
                "much shorter than usual for this language pair: check for omitted sentences"
            } else if r.ratio > 2.0 * high {
                "much longer than usual for this language pair: check for added or untranslated text"
            } else {
                continue;
            };
            findings.push(u.locate(Finding::new(
                CHECK,
                Severity::Warning,
                format!(
                    "{}, outside [{:.2}, {:.2}] (half the low and twice the high end of the usual {low:.2}–{high:.2} for {}→{}): {what}",
                    describe(r),
                    0.5 * low,
                    2.0 * high,
                    ctx.source_lang.code,
                    ctx.target_lang.code
                ),
                u.src_prose(),
                tgt,
            )));
        }
    }
    norm.ratios = ratios;
    (findings, norm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qa::UnitText;
    use crate::termbase::Termbase;

    fn ctx(s: &str, t: &str) -> QaContext {
        QaContext::new(&Lang::parse(s), &Lang::parse(t), &Termbase::default())
    }

    #[test]
    fn statistics() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0], 3.0), 1.0);
        let z = modified_z(&[1.0, 2.0, 3.0, 4.0, 100.0]).unwrap();
        assert!((z[4] - 0.6745 * 97.0).abs() < 1e-9);
        // MAD 0: mean absolute deviation fallback.
        let z = modified_z(&[1.0, 1.0, 1.0, 2.0]).unwrap();
        assert!((z[3] - 1.0 / (1.253314 * 0.25)).abs() < 1e-9);
        assert!(modified_z(&[1.0, 1.0]).is_none());
    }

    /// `n` English units of about 300 prose chars with Chinese targets of `ratio` chars each.
    fn campaign(ratios: &[f64]) -> (Vec<String>, Vec<String>) {
        let src = "Agents plan their steps and call tools. ".repeat(8);
        let s_chars = prose_chars(&src);
        let tgt = ratios
            .iter()
            .map(|r| "智".repeat((s_chars as f64 * r).round() as usize))
            .collect();
        (vec![src; ratios.len()], tgt)
    }

    fn run(c: &QaContext, ratios: &[f64]) -> (Vec<Finding>, LengthNorm) {
        let (s, t) = campaign(ratios);
        let ids: Vec<String> = (0..s.len()).map(|i| format!("c-{i:03}")).collect();
        let units: Vec<UnitText> = (0..s.len())
            .map(|i| UnitText {
                unit: &ids[i],
                chapter: "c",
                source: &s[i],
                target: Some(&t[i]),
            })
            .collect();
        check(c, &Parsed::all(&units))
    }

    #[test]
    fn campaign_norm_flags_outliers_and_truncation() {
        let c = ctx("en", "zh");
        let (f, n) = run(
            &c,
            &[
                0.36, 0.38, 0.37, 0.40, 0.35, 0.39, 0.36, 0.38, 0.37, 0.10, 0.80,
            ],
        );
        assert_eq!(n.basis, NormBasis::Campaign);
        assert_eq!(n.eligible_units, 11);
        assert!((n.median.unwrap() - 0.37).abs() < 0.01);
        let got: Vec<(&str, Severity)> = f.iter().map(|f| (f.unit.as_str(), f.severity)).collect();
        assert_eq!(
            got,
            vec![("c-009", Severity::Error), ("c-010", Severity::Warning)]
        );
        assert!(
            f[0].message.contains("likely truncated"),
            "{}",
            f[0].message
        );
        assert!(f[1].message.contains("much longer"), "{}", f[1].message);
        assert!(f.iter().all(|f| f.check == "length_ratio"));
        assert!(n.ratios[10].z.unwrap() > Z_LIMIT);
    }

    #[test]
    fn clean_campaign_passes() {
        let c = ctx("en", "zh");
        let (f, _) = run(
            &c,
            &[0.36, 0.38, 0.37, 0.40, 0.35, 0.39, 0.36, 0.38, 0.33, 0.43],
        );
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn prior_for_small_campaigns() {
        let c = ctx("en", "zh");
        let (f, n) = run(&c, &[0.37, 0.40, 0.12, 1.0]);
        assert_eq!(n.basis, NormBasis::Prior);
        assert_eq!(n.prior, Some((0.30, 0.45)));
        let got: Vec<(&str, Severity)> = f.iter().map(|f| (f.unit.as_str(), f.severity)).collect();
        assert_eq!(
            got,
            vec![("c-002", Severity::Warning), ("c-003", Severity::Warning)]
        );
        // No prior for an unknown pair: nothing checked.
        let (f, n) = run(&ctx("en", "xx"), &[0.37, 0.40, 0.12, 1.0]);
        assert!(f.is_empty());
        assert_eq!(n.basis, NormBasis::None);
    }

    #[test]
    fn short_units_are_not_eligible() {
        let c = ctx("en", "zh");
        let units = [UnitText {
            unit: "c-000",
            chapter: "c",
            source: "Short.",
            target: Some("短。"),
        }];
        let (f, n) = check(&c, &Parsed::all(&units));
        assert!(f.is_empty());
        assert_eq!(n.eligible_units, 0);
    }
}
