//! Founder interview questions and a founder's answers.

use crate::ids::QuestionId;
use crate::{ValidationError, bounded_text};

bounded_text!(InterviewAnswerText, "answer", 4000);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterviewQuestion {
    pub id: QuestionId,
    pub position: i32,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterviewAnswer {
    pub question_id: QuestionId,
    pub answer: InterviewAnswerText,
}

/// answer_interview takes at most 30 answers a call.
pub const MAX_ANSWERS_PER_CALL: usize = 30;

pub fn check_answer_count(n: usize) -> Result<(), ValidationError> {
    if n > MAX_ANSWERS_PER_CALL { Err(ValidationError::new("answers", "more than 30 items")) } else { Ok(()) }
}
