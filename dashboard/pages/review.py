import streamlit as st

st.header('Review')
st.info('Coming soon.')
